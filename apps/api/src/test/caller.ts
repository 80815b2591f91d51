import { verifyEmailThroughOutbox } from "./mail.ts";
import { signUp } from "./oidc-client.ts";

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Caller {
  email: string;
  token: string;
  /** Calls the API with this person's token, or with `auth` (an API key, or "" for none). */
  api<T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; auth?: string; headers?: Record<string, string> },
  ): Promise<ApiAnswer<T>>;
}

/**
 * A person signed up through the real issuer and registered as a creator; `verified` also opens
 * the verification link mailed to them (through the development outbox), as payouts and operator
 * rights require.
 */
export async function createCaller(
  baseUrl: string,
  displayName = "Test Creator",
  options: { email?: string; verified?: boolean } = {},
): Promise<Caller> {
  const tokens = await signUp(baseUrl, { displayName, email: options.email });
  const caller = callerAt(baseUrl, { email: tokens.email, token: tokens.access_token });
  const registered = await caller.api("POST", "/api/auth/register/");
  if (registered.status !== 200) throw new Error(`register failed: ${registered.status}`);
  if (options.verified) await verifyEmailThroughOutbox(baseUrl, tokens.email, tokens.password);
  return caller;
}

/** The same person calling another server (another process behind the same PUBLIC_URL). */
export function callerAt(baseUrl: string, person: { email: string; token: string }): Caller {
  return {
    ...person,
    async api(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const auth = options.auth ?? person.token;
      if (auth) headers.authorization = `Bearer ${auth}`;
      if (options.body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: response.status, body: body as never, headers: response.headers };
    },
  };
}

/** Tops up a wallet through the real payment flow (sandbox gateway, test card 4242…); answers the balance in micro-dollars. */
export async function fundWallet(caller: Caller, cents: number): Promise<number> {
  const intent = await caller.api("POST", "/api/wallet/payment-intents/", {
    body: { amount: cents, currency: "usd" },
  });
  if (intent.status !== 200)
    throw new Error(`payment intent failed: ${intent.status} ${JSON.stringify(intent.body)}`);
  const confirmed = await caller.api("POST", "/api/billing/sandbox/confirm/", {
    body: {
      client_secret: intent.body.client_secret,
      card: { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" },
    },
  });
  if (confirmed.body?.status !== "succeeded")
    throw new Error(`top-up failed: ${JSON.stringify(confirmed.body)}`);
  return confirmed.body.balance_micros as number;
}

/**
 * The caller's wallet once nothing is held: a lease's unspent rest goes back to the wallet when
 * its calls stop (billing/call-payment/leases.ts, within a few seconds).
 */
export async function settledWallet(
  caller: Caller,
): Promise<{ balance_micros: number; held_micros: number; earnings_micros: number }> {
  const until = Date.now() + 10_000;
  for (;;) {
    const { body } = await caller.api("GET", "/api/wallet/");
    if (body.held_micros === 0 || Date.now() > until) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Calls `path` on the server at `url` with the caller's token (for requests spread over servers). */
export async function callOn(
  caller: Caller,
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${caller.token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}
