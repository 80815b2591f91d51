import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "./errors.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Frees this call's admission slot (lib/admission.ts); safe to call more than once. */
    releaseAdmission?: () => void;
  }
}

export interface AdmissionGate {
  /** onRequest hook: waits for a slot before the body is read. */
  hook(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Calls holding a slot, and calls waiting for one. */
  readonly load: { admitted: number; waiting: number };
}

interface Waiter {
  admit(granted: boolean): void;
}

/**
 * Paid calls in their starting phase (body read and checked, prompt prepared, payment taken) are
 * limited to `limit` at a time; the others wait their turn in arrival order with their body still
 * unread in the socket. A call frees its slot when its upstream call starts (`releaseAdmission`, in
 * the paid path) or when its response ends or its client goes away. A burst of thousands of calls
 * then holds thousands of idle sockets, not thousands of parsed requests queued for a database
 * connection (docs/decisions/012-paid-path-latency.md); calls waiting on the upstream are not
 * limited.
 */
export function createAdmissionGate(limit: number): AdmissionGate {
  let admitted = 0;
  const queue: Waiter[] = [];
  const handOver = () => {
    const next = queue.shift();
    if (next) next.admit(true);
    else admitted -= 1;
  };
  return {
    get load() {
      return { admitted, waiting: queue.length };
    },
    async hook(request, reply) {
      let holding = false;
      let done = false;
      let waiter: Waiter | undefined;
      const release = () => {
        if (done) return;
        done = true;
        if (holding) return handOver();
        const at = waiter ? queue.indexOf(waiter) : -1;
        if (waiter && at >= 0) {
          queue.splice(at, 1);
          waiter.admit(false);
        }
      };
      request.releaseAdmission = release;
      reply.raw.once("close", release);
      if (admitted < limit) {
        admitted += 1;
        holding = true;
        return;
      }
      const granted = await new Promise<boolean>((resolve) => {
        waiter = { admit: resolve };
        queue.push(waiter);
      });
      if (granted && !done) {
        holding = true;
        return;
      }
      // The client went away while waiting; a slot handed over meanwhile goes to the next caller.
      if (granted) handOver();
      throw new AppError("unavailable", "The call was cancelled before it started");
    },
  };
}
