import { vi } from "vitest";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
}

type Handler = (request: RecordedRequest) => Response | Promise<Response>;

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/**
 * Replaces `fetch` with handlers keyed by "METHOD /path" (e.g. "GET /api/auth/profile/").
 * A request without a handler fails the test with a 599 answer and a clear message.
 */
export function stubFetch(handlers: Record<string, Handler>) {
  const requests: RecordedRequest[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const method = (init?.method ?? "GET").toUpperCase();
    const path = String(input);
    const body = typeof init?.body === "string" ? (JSON.parse(init.body) as unknown) : undefined;
    const request = { method, path, headers: new Headers(init?.headers), body };
    requests.push(request);
    const handler = handlers[`${method} ${path}`];
    if (!handler) return jsonResponse({ message: `No test handler for ${method} ${path}` }, 599);
    return handler(request);
  });
  vi.stubGlobal("fetch", fetchMock);
  return {
    fetchMock,
    requests,
    /** The requests made to "METHOD /path". */
    callsTo(key: string) {
      return requests.filter((request) => `${request.method} ${request.path}` === key);
    },
  };
}
