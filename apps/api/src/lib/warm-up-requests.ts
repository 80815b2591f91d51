import type { FastifyRequest } from "fastify";

/**
 * The address the warm-up's requests come from (light-my-request's socket). No real socket has it,
 * and it is the raw socket's address (not X-Forwarded-For): a client cannot pose as the warm-up.
 */
export const WARM_UP_ADDRESS = "warm-up";

/** The sockets the start-up rehearsal's calls come on (a loopback listener of its own, warm-up.ts). */
const rehearsalSockets = new WeakSet<object>();

/** Marks a socket of the rehearsal's own listener: its requests are the warm-up's. */
export function rehearsalSocket(socket: object): void {
  rehearsalSockets.add(socket);
}

/**
 * A warm-up request (warm-up.ts): not logged, not counted in the metrics, not counted against the
 * rate limits (its 40 calls come from 127.0.0.1, the address a local proxy's clients share).
 */
export function isWarmUpRequest(request: FastifyRequest): boolean {
  const socket = request.raw.socket;
  return socket?.remoteAddress === WARM_UP_ADDRESS || (socket !== undefined && rehearsalSockets.has(socket));
}
