import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A payment method whose charges the double declines (Stripe's test card of that name). */
export const DECLINED_PAYMENT_METHOD = "pm_card_chargeDeclined";

/** A shared payment token the double granted, as Stripe keeps it. */
export interface GrantedTokenRecord {
  id: string;
  paymentMethod: string;
  maxAmount: number;
  currency: string;
  expiresAt: number;
  capturedCents: number;
  deactivatedReason: "consumed" | "revoked" | "expired" | null;
}

export interface CapturedPayment {
  id: string;
  amount: number;
  currency: string;
  spt: string;
  refunded: number;
}

export interface MppStripeDouble {
  /** For MPP_STRIPE_API_URL. */
  url: string;
  tokens: Map<string, GrantedTokenRecord>;
  /** Every PaymentIntent that captured money, by id. */
  captured: Map<string, CapturedPayment>;
  /** Every money-moving request the double acted on (not the replayed ones). */
  charges: number;
  /** Sum of what was captured, and of what was refunded, in cents. */
  capturedCents(): number;
  refundedCents(): number;
  /** Grants a token (Stripe's test helper, as an agent's platform would share one). */
  grantToken(limits: {
    paymentMethod?: string;
    maxAmount: number;
    currency?: string;
    expiresAt?: number;
  }): Promise<string>;
  /**
   * The fate of the next request to `path`: `slow` acts, then answers after `ms` (a client
   * timing out after Stripe charged); `fail` answers a 500 without acting.
   */
  fault?: (path: string) => { kind: "slow"; ms: number } | { kind: "fail" } | undefined;
  close(): Promise<void>;
}

type Answer = { status: number; body: object };

/**
 * A loopback Stripe for MPP's stripe method: the test helper that grants shared payment tokens
 * (with an amount, a currency and an expiry), their retrieval, PaymentIntents confirmed with one
 * (the secret key checked; the token must exist, be active, unexpired, in the currency and within
 * its limit; `pm_card_chargeDeclined` is declined with Stripe's card_error), refunds (never more
 * than captured), and Stripe's idempotency (a repeated Idempotency-Key gets the first answer with
 * `Idempotent-Replayed: true`, and nothing is done twice; the same key with other parameters is
 * an idempotency_error).
 */
export async function startMppStripeDouble(secretKey: string): Promise<MppStripeDouble> {
  const tokens = new Map<string, GrantedTokenRecord>();
  const captured = new Map<string, CapturedPayment>();
  const answered = new Map<string, { fingerprint: string; answer: Answer }>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${(++counter).toString().padStart(8, "0")}`;
  const error = (status: number, type: string, message: string, extra: object = {}): Answer => ({
    status,
    body: { error: { type, message, ...extra } },
  });

  const tokenObject = (token: GrantedTokenRecord) => ({
    id: token.id,
    object: "shared_payment.granted_token",
    created: token.expiresAt - 3600,
    deactivated_at: token.deactivatedReason ? Math.floor(Date.now() / 1000) : null,
    deactivated_reason: token.deactivatedReason,
    livemode: false,
    payment_method_details: {
      type: "card",
      card: {
        brand: "visa",
        last4: token.paymentMethod === DECLINED_PAYMENT_METHOD ? "0002" : "4242",
        fingerprint: createHash("sha256").update(token.paymentMethod).digest("hex").slice(0, 16),
      },
    },
    usage_limits: { currency: token.currency, max_amount: token.maxAmount, expires_at: token.expiresAt },
    usage_details: { amount_captured: { value: token.capturedCents, currency: token.currency } },
  });

  const createPaymentIntent = (form: URLSearchParams): Answer => {
    const spt = form.get("shared_payment_granted_token") ?? "";
    const amount = Number(form.get("amount"));
    const currency = form.get("currency") ?? "";
    const token = tokens.get(spt);
    if (!token)
      return error(400, "invalid_request_error", `No such shared_payment_granted_token: '${spt}'`, {
        code: "resource_missing",
        param: "shared_payment_granted_token",
      });
    if (!Number.isInteger(amount) || amount < 50)
      return error(400, "invalid_request_error", "Amount must be at least $0.50 usd", {
        code: "amount_too_small",
      });
    if (token.deactivatedReason || token.expiresAt * 1000 <= Date.now())
      return error(
        400,
        "invalid_request_error",
        `The shared payment token is ${token.deactivatedReason ?? "expired"}`,
        {
          code: "shared_payment_token_inactive",
        },
      );
    if (currency !== token.currency)
      return error(400, "invalid_request_error", `The shared payment token is limited to ${token.currency}`, {
        code: "shared_payment_token_currency_mismatch",
      });
    if (token.capturedCents + amount > token.maxAmount)
      return error(400, "invalid_request_error", "The amount exceeds the shared payment token's max_amount", {
        code: "shared_payment_token_limit_exceeded",
      });
    const id = nextId("pi");
    if (token.paymentMethod === DECLINED_PAYMENT_METHOD)
      return error(402, "card_error", "Your card was declined.", {
        code: "card_declined",
        decline_code: "generic_decline",
        payment_intent: { id, object: "payment_intent", amount, currency, status: "requires_payment_method" },
      });
    token.capturedCents += amount;
    if (token.capturedCents >= token.maxAmount) token.deactivatedReason = "consumed";
    captured.set(id, { id, amount, currency, spt, refunded: 0 });
    double.charges += 1;
    return {
      status: 200,
      body: {
        id,
        object: "payment_intent",
        amount,
        amount_received: amount,
        currency,
        status: "succeeded",
        metadata: Object.fromEntries(
          [...form]
            .filter(([key]) => key.startsWith("metadata["))
            .map(([key, value]) => [key.slice(9, -1), value]),
        ),
      },
    };
  };

  const createRefund = (form: URLSearchParams): Answer => {
    const payment = captured.get(form.get("payment_intent") ?? "");
    if (!payment)
      return error(400, "invalid_request_error", `No such payment_intent: '${form.get("payment_intent")}'`, {
        code: "resource_missing",
      });
    const amount = form.has("amount") ? Number(form.get("amount")) : payment.amount - payment.refunded;
    if (!Number.isInteger(amount) || amount <= 0 || payment.refunded + amount > payment.amount)
      return error(
        400,
        "invalid_request_error",
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${payment.amount - payment.refunded})`,
        { code: "amount_too_large" },
      );
    payment.refunded += amount;
    double.charges += 1;
    return {
      status: 200,
      body: {
        id: nextId("re"),
        object: "refund",
        amount,
        currency: payment.currency,
        payment_intent: payment.id,
        status: "succeeded",
      },
    };
  };

  const act = (method: string, path: string, form: URLSearchParams): Answer => {
    if (method === "POST" && path === "/v1/test_helpers/shared_payment/granted_tokens") {
      const token: GrantedTokenRecord = {
        id: nextId("spt"),
        paymentMethod: form.get("payment_method") ?? "",
        maxAmount: Number(form.get("usage_limits[max_amount]")),
        currency: form.get("usage_limits[currency]") ?? "usd",
        expiresAt: Number(form.get("usage_limits[expires_at]") || Math.floor(Date.now() / 1000) + 3600),
        capturedCents: 0,
        deactivatedReason: null,
      };
      if (!token.paymentMethod || !Number.isInteger(token.maxAmount) || token.maxAmount <= 0)
        return error(
          400,
          "invalid_request_error",
          "payment_method and usage_limits[max_amount] are required",
        );
      tokens.set(token.id, token);
      return { status: 200, body: tokenObject(token) };
    }
    const granted = /^\/v1\/shared_payment\/granted_tokens\/([^/?]+)$/.exec(path);
    if (method === "GET" && granted?.[1]) {
      const token = tokens.get(decodeURIComponent(granted[1]));
      return token
        ? { status: 200, body: tokenObject(token) }
        : error(404, "invalid_request_error", `No such shared_payment_granted_token: '${granted[1]}'`, {
            code: "resource_missing",
          });
    }
    if (method === "POST" && path === "/v1/payment_intents") return createPaymentIntent(form);
    if (method === "POST" && path === "/v1/refunds") return createRefund(form);
    return error(404, "invalid_request_error", `Unrecognized request URL (${method}: ${path})`);
  };

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const form = new URLSearchParams(raw);
      const method = req.method ?? "GET";
      const path = req.url ?? "";
      const send = ({ status, body }: Answer, replayed = false) => {
        if (res.destroyed) return;
        res.writeHead(status, {
          "content-type": "application/json",
          "request-id": `req_${++counter}`,
          ...(replayed ? { "idempotent-replayed": "true" } : {}),
        });
        res.end(JSON.stringify(body));
      };
      const authorization = req.headers.authorization ?? "";
      const basic = `Basic ${Buffer.from(`${secretKey}:`).toString("base64")}`;
      if (authorization !== `Bearer ${secretKey}` && authorization !== basic)
        return send(error(401, "invalid_request_error", "Invalid API Key provided"));
      const key = req.headers["idempotency-key"];
      const replayKey = method === "POST" && typeof key === "string" ? `${path} ${key}` : undefined;
      const previous = replayKey ? answered.get(replayKey) : undefined;
      if (previous) {
        if (previous.fingerprint !== raw)
          return send(
            error(
              400,
              "idempotency_error",
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            ),
          );
        return send(previous.answer, true);
      }
      const fault = double.fault?.(path);
      if (fault?.kind === "fail") return send(error(500, "api_error", "An unknown error occurred"));
      const answer = act(method, path, form);
      // Stripe keeps a key's answer unless it was a 5xx (it may be retried).
      if (replayKey && answer.status < 500) answered.set(replayKey, { fingerprint: raw, answer });
      if (fault?.kind === "slow") setTimeout(() => send(answer), fault.ms);
      else send(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const double: MppStripeDouble = {
    url,
    tokens,
    captured,
    charges: 0,
    capturedCents: () => [...captured.values()].reduce((sum, payment) => sum + payment.amount, 0),
    refundedCents: () => [...captured.values()].reduce((sum, payment) => sum + payment.refunded, 0),
    async grantToken({ paymentMethod = "pm_card_visa", maxAmount, currency = "usd", expiresAt }) {
      const body = new URLSearchParams({
        payment_method: paymentMethod,
        "usage_limits[max_amount]": String(maxAmount),
        "usage_limits[currency]": currency,
        "usage_limits[expires_at]": String(expiresAt ?? Math.floor(Date.now() / 1000) + 3600),
      });
      const response = await fetch(`${url}/v1/test_helpers/shared_payment/granted_tokens`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${secretKey}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body,
      });
      const token = (await response.json()) as { id?: string; error?: { message: string } };
      if (!token.id) throw new Error(`the Stripe double granted no token: ${token.error?.message}`);
      return token.id;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return double;
}
