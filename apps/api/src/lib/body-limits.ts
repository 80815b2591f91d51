import type { FastifyInstance, onRequestHookHandler } from "fastify";

/** What a request without credentials may send to a route that does not say otherwise. */
export const PUBLIC_BODY_LIMIT_BYTES = 16 * 1024;

const authenticating = new WeakSet<object>();

/** Marks an onRequest hook that refuses requests without valid credentials. */
export function authenticates<T extends object>(hook: T): T {
  authenticating.add(hook);
  return hook;
}

/**
 * A body is read and parsed only after the route's onRequest hooks ran, so a route whose
 * onRequest authenticates the caller parses nothing for strangers. Every other route (reachable
 * without credentials) gets a small body limit unless it declares its own, so unauthenticated
 * requests cannot make the server read and parse megabytes.
 */
export function limitPublicBodies(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    if (route.bodyLimit !== undefined) return;
    const hooks = [route.onRequest].flat().filter(Boolean) as onRequestHookHandler[];
    if (!hooks.some((hook) => authenticating.has(hook))) route.bodyLimit = PUBLIC_BODY_LIMIT_BYTES;
  });
}

/** "16 KiB", "1 MiB": a body limit as people read it. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
