import { randomBytes } from "node:crypto";

/**
 * What an MCP client declared at `initialize` that later requests need, carried in its session id.
 *
 * The MCP endpoints are stateless (every POST gets a fresh server, on any process), so the server
 * answering `tools/call` never saw the client's `initialize` and its capabilities. Clients send
 * back the `Mcp-Session-Id` an `initialize` answer carries on every later request (Streamable
 * HTTP, 2025-11-25), so the id itself carries the one capability the tools act on: URL-mode
 * elicitation (a payment refusal then asks the client to open the top-up page, call-app.ts).
 * It is not a credential and grants nothing: a client that forges it only changes how it is told
 * to top up, which it could equally have declared. The random part keeps ids unique, as the
 * transport specification asks.
 */
export interface ClientSession {
  /** The client declared `capabilities.elicitation.url` (URL-mode elicitation, 2025-11-25). */
  urlElicitation: boolean;
}

const NO_SESSION: ClientSession = { urlElicitation: false };
const SESSION_ID = /^pm1\.[A-Za-z0-9_-]{22}\.([a-z-])$/;

/** The session id answered to an `initialize` request declaring `capabilities`. */
export function sessionIdFor(capabilities: unknown): string {
  const elicitation = (capabilities as { elicitation?: { url?: unknown } } | undefined)?.elicitation;
  const flag = elicitation && typeof elicitation === "object" && elicitation.url ? "u" : "-";
  return `pm1.${randomBytes(16).toString("base64url")}.${flag}`;
}

/** What the session id of a request says, if it is one of ours; otherwise nothing declared. */
export function clientSessionOf(header: string | string[] | undefined): ClientSession {
  const match = typeof header === "string" ? SESSION_ID.exec(header) : null;
  return match ? { urlElicitation: match[1] === "u" } : NO_SESSION;
}

/** The capabilities of an `initialize` request body, if it is one. */
export function initializeCapabilities(body: unknown): { capabilities: unknown } | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { capabilities?: unknown } };
  return method === "initialize" ? { capabilities: params?.capabilities } : undefined;
}
