import type { FastifyRequest } from "fastify";
import { describe, expect, it, vi } from "vitest";
import { AppError } from "../../lib/errors.ts";
import { generatePaidAnswer } from "./call-lifecycle.ts";
import type { Execution, ExecutionResult } from "./execution.ts";
import type { CallOutcome, PaidCall } from "./paid-call.ts";

const request = { log: { error: vi.fn() } } as unknown as FastifyRequest;
const answer: ExecutionResult = { answer: "hi", inputTokens: 1, outputTokens: 1, answeredBy: "gpt-4o-mini" };

/** A paid call that remembers how it was ended. */
function paidCall() {
  const ends: CallOutcome[] = [];
  const paid = {
    messageId: "m-1",
    createdAt: 0,
    started: 0,
    async end(outcome: CallOutcome) {
      ends.push(outcome);
      return outcome.kind === "answered"
        ? { chargedCents: 25, paidBy: "wallet" as const }
        : { chargedCents: 0, paidBy: "none" as const };
    },
  } as unknown as PaidCall;
  return { paid, ends };
}

const execution = (generate: () => Promise<ExecutionResult>) => ({ generate }) as unknown as Execution;

describe("a paid call's life (decision 048)", () => {
  it("ends an answered call once, as answered, and says what it cost", async () => {
    const { paid, ends } = paidCall();
    const answered = await generatePaidAnswer(
      request,
      paid,
      execution(async () => answer),
    );
    expect(answered).toEqual({ result: answer, charge: { chargedCents: 25, paidBy: "wallet" } });
    expect(ends).toEqual([{ kind: "answered", result: answer }]);
  });

  it("ends a call whose upstream refused it (below 500) as failed, and gives back what is not charged", async () => {
    const { paid, ends } = paidCall();
    const refused = new AppError("bad_request", "Unknown model 'gone'");
    const notCharged = vi.fn(async () => {});
    await expect(
      generatePaidAnswer(
        request,
        paid,
        execution(() => Promise.reject(refused)),
        notCharged,
      ),
    ).rejects.toBe(refused);
    expect(ends).toEqual([{ kind: "failed", error: refused }]);
    expect(notCharged).toHaveBeenCalledOnce();
  });

  it("ends a call that failed with an unknown error as failed upstream", async () => {
    const { paid, ends } = paidCall();
    await expect(
      generatePaidAnswer(
        request,
        paid,
        execution(() => Promise.reject(new Error("socket hang up"))),
      ),
    ).rejects.toMatchObject({ code: "upstream_failed" });
    expect(ends).toMatchObject([{ kind: "failed", error: { code: "upstream_failed" } }]);
  });
});
