import { EventEmitter } from "node:events";
import type { FastifyReply, FastifyRequest } from "fastify";
import { expect, it } from "vitest";
import { createAdmissionGate } from "./admission.ts";

/** A request and a reply whose raw response can be closed, as Node does when the call ends or the client leaves. */
function call() {
  const request = {} as FastifyRequest;
  const raw = new EventEmitter();
  const reply = { raw } as unknown as FastifyReply;
  return { request, reply, close: () => raw.emit("close") };
}

const settled = async (promise: Promise<unknown>) => {
  let state = "pending";
  promise.then(
    () => {
      state = "admitted";
    },
    () => {
      state = "refused";
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

it("admits up to the limit, queues the rest in order, and hands each freed slot to the next", async () => {
  const gate = createAdmissionGate(2);
  const calls = [call(), call(), call(), call()];
  const hooks = calls.map((c) => gate.hook(c.request, c.reply));

  expect(await Promise.all(hooks.slice(0, 2).map(settled))).toEqual(["admitted", "admitted"]);
  expect(await settled(hooks[2] as Promise<void>)).toBe("pending");
  expect(gate.load).toEqual({ admitted: 2, waiting: 2 });

  calls[0]?.request.releaseAdmission?.();
  calls[0]?.request.releaseAdmission?.(); // twice: still one slot
  expect(await settled(hooks[2] as Promise<void>)).toBe("admitted");
  expect(await settled(hooks[3] as Promise<void>)).toBe("pending");
  expect(gate.load).toEqual({ admitted: 2, waiting: 1 });

  calls[1]?.close(); // the response ended: its slot goes on
  expect(await settled(hooks[3] as Promise<void>)).toBe("admitted");
  expect(gate.load).toEqual({ admitted: 2, waiting: 0 });

  calls[2]?.request.releaseAdmission?.();
  calls[3]?.close();
  calls[3]?.request.releaseAdmission?.();
  expect(gate.load).toEqual({ admitted: 0, waiting: 0 });
});

it("drops a caller who leaves while waiting, without losing a slot", async () => {
  const gate = createAdmissionGate(1);
  const first = call();
  const leaver = call();
  const next = call();
  await gate.hook(first.request, first.reply);
  const leaving = gate.hook(leaver.request, leaver.reply);
  const waiting = gate.hook(next.request, next.reply);

  leaver.close();
  await expect(leaving).rejects.toMatchObject({ code: "unavailable" });
  expect(gate.load).toEqual({ admitted: 1, waiting: 1 });
  first.request.releaseAdmission?.();
  expect(await settled(waiting)).toBe("admitted");
  next.close();
  expect(gate.load).toEqual({ admitted: 0, waiting: 0 });
});
