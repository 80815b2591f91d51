import http from "node:http";
import type { AddressInfo } from "node:net";
import { Challenge, Receipt } from "mppx";
import { Mppx, stripe } from "mppx/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { MppConfig } from "../../../config.ts";
import { AppError } from "../../../lib/errors.ts";
import {
  DECLINED_PAYMENT_METHOD,
  type MppStripeDouble,
  startMppStripeDouble,
} from "../../../test/mpp-stripe-double.ts";
import { createMppRail } from "./mpp-rail.ts";
import type { PaidResource, PaymentRail, RailSettlement, VerifiedPayment } from "./rail.ts";

/** Reads a credential, then checks it with Stripe: the two steps the platform takes (balances.ts). */
async function verifyWith(rail: PaymentRail, credential: string, resource: PaidResource) {
  return rail.verify(await rail.decode(credential, resource), resource);
}

const STRIPE_KEY = "sk_test_mpp_double";
/** The paths the tiny server sells, at their price in cents. */
const PRICES: Record<string, number> = { "/summarize": 75, "/translate": 120, "/cheap": 5 };

let double: MppStripeDouble;
let rail: PaymentRail;
let config: MppConfig;
let base: string;
let server: http.Server;
/** What the server did with each paid request (the table's part, kept in memory here). */
const seenIdentities = new Set<string>();
const outcomes: { payment: VerifiedPayment; settlement: RailSettlement }[] = [];

const resourceOf = (path: string): PaidResource => ({
  priceCents: PRICES[path] ?? 0,
  url: `${base}${path}`,
  description: `One call of ${path}`,
});

/** A client that pays with the real mppx client: its stripe method grants a token at the double. */
function payingClient(
  paymentMethod = "pm_card_visa",
  limit: (amount: number) => number = (amount) => amount,
) {
  return Mppx.create({
    polyfill: false,
    methods: [
      stripe.charge({
        paymentMethod,
        createToken: ({ amount, currency, expiresAt, paymentMethod: method }) =>
          double.grantToken({ paymentMethod: method, maxAmount: limit(Number(amount)), currency, expiresAt }),
      }),
    ],
  });
}

/** The credential the real client makes for a fresh 402 of `path`. */
async function credentialFor(path: string, client = payingClient()): Promise<string> {
  const challenged = await fetch(`${base}${path}`);
  expect(challenged.status).toBe(402);
  return client.createCredential(challenged);
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

beforeAll(async () => {
  double = await startMppStripeDouble(STRIPE_KEY);
  server = http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const resource = resourceOf(path);
    const answer = (status: number, headers: Record<string, string>, body: object) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    try {
      const credential = rail.credentialOf(req.headers);
      if (!credential) return answer(402, await rail.challenge(resource), { error: "payment required" });
      const payment = await verifyWith(rail, credential, resource);
      // The payments table's unique key on the identity.
      if (seenIdentities.has(payment.identity))
        return answer(409, {}, { error: "replayed", identity: payment.identity });
      seenIdentities.add(payment.identity);
      const settlement = await rail.settle(payment);
      outcomes.push({ payment, settlement });
      if (settlement.kind === "settled")
        return answer(200, settlement.headers, { ok: true, payer: payment.payer });
      if (settlement.kind === "refused")
        throw await rail.refuse(resource, "payment_refused", settlement.reason);
      return answer(503, { "retry-after": "1" }, { error: settlement.reason });
    } catch (error) {
      if (error instanceof AppError)
        return answer(error.status, error.headers ?? {}, { error: error.message });
      return answer(500, {}, { error: (error as Error).message });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config = {
    secretKey: "mpp-test-challenge-key-0123456789abcdef",
    stripeSecretKey: STRIPE_KEY,
    stripeApiUrl: double.url,
    networkId: "internal",
    realm: "promptmint.test",
    challengeTtlSeconds: 300,
  };
  rail = createMppRail(config, { timeoutMs: 400, maxNetworkRetries: 0 });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await double.close();
});

beforeEach(() => {
  double.fault = undefined;
  outcomes.length = 0;
});

describe("the MPP rail (stripe charge, shared payment tokens)", () => {
  it("takes a paid request end to end with the real mppx client: the double captured exactly its price", async () => {
    const before = double.capturedCents();
    const response = await payingClient().fetch(`${base}/summarize`);
    expect(response.status).toBe(200);
    const receipt = Receipt.fromResponse(response);
    expect(receipt.method).toBe("stripe");
    expect(receipt.status).toBe("success");
    const captured = double.captured.get(receipt.reference);
    expect(captured).toMatchObject({ amount: 75, currency: "usd", refunded: 0 });
    expect(double.capturedCents() - before).toBe(75);
    expect(outcomes[0]?.payment.amountMicros).toBe(750_000);
    expect(outcomes[0]?.payment.payer.rail).toBe("mpp");
    expect(outcomes[0]?.payment.payer.subject).toMatch(/^stripe:card:[0-9a-f]{16}$/);
  });

  it("asks Stripe's 50-cent minimum for a cheaper call, and says so in its offer", async () => {
    const challenged = await fetch(`${base}/cheap`);
    const challenge = Challenge.fromResponse(challenged);
    expect(challenge.request.amount).toBe("50");
    expect(rail.offer(5)).toMatchObject({ amount_cents: 50, currency: "usd", method: "stripe" });
    const response = await payingClient().fetch(`${base}/cheap`);
    expect(response.status).toBe(200);
    expect(double.captured.get(Receipt.fromResponse(response).reference)?.amount).toBe(50);
  });

  it("reads only the Payment scheme of Authorization, never a Bearer key", () => {
    expect(rail.credentialOf({ authorization: "Bearer pm_live_key" })).toBeUndefined();
    expect(rail.credentialOf({})).toBeUndefined();
    expect(rail.credentialOf({ authorization: "Payment abc" })).toBe("Payment abc");
    expect(rail.credentialOf({ authorization: "Bearer pm_live_key, Payment abc" })).toBe("Payment abc");
  });

  it("gives a replayed credential the same identity, so the table refuses it and Stripe charges once", async () => {
    const credential = await credentialFor("/summarize");
    const first = await fetch(`${base}/summarize`, { headers: { authorization: credential } });
    expect(first.status).toBe(200);
    const charges = double.charges;
    const again = await fetch(`${base}/summarize`, { headers: { authorization: credential } });
    expect(again.status).toBe(409);
    expect(double.charges).toBe(charges);
    const one = await verifyWith(rail, credential, resourceOf("/summarize"));
    const two = await verifyWith(rail, credential, resourceOf("/summarize"));
    expect(two.identity).toBe(one.identity);
    const other = await verifyWith(rail, await credentialFor("/summarize"), resourceOf("/summarize"));
    expect(other.identity).not.toBe(one.identity);
  });

  it("refuses a credential for another resource, another amount, an altered or a foreign challenge with a 402 naming why", async () => {
    const charges = double.charges;
    const credential = await credentialFor("/summarize");
    const elsewhere = await refusal(verifyWith(rail, credential, resourceOf("/translate")));
    expect(elsewhere.status).toBe(402);
    expect(elsewhere.message).toMatch(/resource_mismatch/);
    expect(elsewhere.headers?.["www-authenticate"]).toMatch(/^Payment /);
    expect(elsewhere.remedy).toMatchObject({ missing: "payment", price_cents: 120 });

    const dearer = await refusal(
      verifyWith(rail, credential, { ...resourceOf("/summarize"), priceCents: 100 }),
    );
    expect(dearer.message).toMatch(/amount_mismatch/);

    // The client lowers the amount in the challenge it echoes: the HMAC no longer matches.
    const [scheme, encoded] = credential.split(" ");
    const wire = JSON.parse(Buffer.from(encoded ?? "", "base64url").toString());
    const request = JSON.parse(Buffer.from(wire.challenge.request, "base64url").toString());
    wire.challenge.request = Buffer.from(JSON.stringify({ ...request, amount: "1" })).toString("base64url");
    const altered = `${scheme} ${Buffer.from(JSON.stringify(wire)).toString("base64url")}`;
    expect((await refusal(verifyWith(rail, altered, resourceOf("/summarize")))).message).toMatch(
      /unknown_challenge/,
    );

    const foreign = createMppRail({ ...config, secretKey: "another-server-s-key-0123456789abcdef" });
    const challenge = await foreign.challenge(resourceOf("/summarize"));
    const fromForeign = await payingClient().createCredential(
      new Response(null, { status: 402, headers: challenge }),
    );
    expect((await refusal(verifyWith(rail, fromForeign, resourceOf("/summarize")))).message).toMatch(
      /unknown_challenge/,
    );

    const garbage = await refusal(verifyWith(rail, "Payment not-base64-json", resourceOf("/summarize")));
    expect(garbage.message).toMatch(/invalid_credential/);
    expect(double.charges).toBe(charges);
    expect(outcomes).toHaveLength(0);
  });

  it("names the payer by the card Stripe fingerprints, never by the unsigned `source` a credential claims", async () => {
    const credential = await credentialFor("/summarize");
    const plain = await verifyWith(rail, credential, resourceOf("/summarize"));
    const [scheme, encoded] = credential.split(" ");
    const wire = JSON.parse(Buffer.from(encoded ?? "", "base64url").toString());
    const claimed = `${scheme} ${Buffer.from(JSON.stringify({ ...wire, source: "did:pkh:eip155:1:0x1111111111111111111111111111111111111111" })).toString("base64url")}`;
    const withSource = await verifyWith(rail, claimed, resourceOf("/summarize"));
    expect(withSource.payer.subject).toBe(plain.payer.subject);
    expect(withSource.payer.subject).toMatch(/^stripe:card:/);
    expect(withSource.payer.label).toMatch(/^did:pkh:eip1…11111111$/);
    const otherCard = await verifyWith(
      rail,
      await credentialFor("/summarize", payingClient("pm_card_mastercard")),
      resourceOf("/summarize"),
    );
    expect(otherCard.payer.subject).not.toBe(plain.payer.subject);
  });

  it("refuses an expired challenge, and answers 503 when Stripe cannot say what the token is", async () => {
    const credential = await credentialFor("/summarize");
    const later = createMppRail(config, { now: () => new Date(Date.now() + 301_000), maxNetworkRetries: 0 });
    expect((await refusal(verifyWith(later, credential, resourceOf("/summarize")))).message).toMatch(
      /challenge_expired/,
    );
    double.fault = (path) => (path.startsWith("/v1/shared_payment/") ? { kind: "fail" } : undefined);
    const down = await refusal(verifyWith(rail, credential, resourceOf("/summarize")));
    expect(down.status).toBe(503);
  });

  it("refuses a token whose limit is below the amount before anything is charged", async () => {
    const charges = double.charges;
    const credential = await credentialFor(
      "/summarize",
      payingClient("pm_card_visa", (amount) => amount - 1),
    );
    const refused = await refusal(verifyWith(rail, credential, resourceOf("/summarize")));
    expect(refused.message).toMatch(/invalid_token.*allows 74 cents/);
    expect(double.charges).toBe(charges);
  });

  it("settles a declined token as refused, with nothing captured", async () => {
    const before = double.capturedCents();
    const credential = await credentialFor("/translate", payingClient(DECLINED_PAYMENT_METHOD));
    const response = await fetch(`${base}/translate`, { headers: { authorization: credential } });
    expect(response.status).toBe(402);
    expect(outcomes[0]?.settlement).toMatchObject({ kind: "refused" });
    expect(outcomes[0]?.settlement.kind === "refused" && outcomes[0].settlement.reason).toMatch(
      /card_declined|generic_decline/,
    );
    expect(double.capturedCents()).toBe(before);
  });

  it("is pending when Stripe answers too late, and settling again finds the one capture", async () => {
    const credential = await credentialFor("/translate");
    const payment = await verifyWith(rail, credential, resourceOf("/translate"));
    const charges = double.charges;
    double.fault = (path) => (path === "/v1/payment_intents" ? { kind: "slow", ms: 1_000 } : undefined);
    const late = await rail.settle(payment);
    expect(late.kind).toBe("pending");
    expect(double.charges).toBe(charges + 1); // Stripe charged; its answer was lost
    double.fault = undefined;
    const again = await rail.settle(payment);
    expect(again.kind).toBe("settled");
    expect(double.charges).toBe(charges + 1);
    expect(again.kind === "settled" && double.captured.get(again.reference)?.amount).toBe(120);
  });

  it("is pending when Stripe fails with a 5xx, and nothing was charged", async () => {
    const payment = await verifyWith(rail, await credentialFor("/translate"), resourceOf("/translate"));
    const charges = double.charges;
    double.fault = (path) => (path === "/v1/payment_intents" ? { kind: "fail" } : undefined);
    expect(await rail.settle(payment)).toMatchObject({ kind: "pending" });
    expect(double.charges).toBe(charges);
  });

  it("charges once when one payment is settled twice at once (two processes)", async () => {
    const payment = await verifyWith(rail, await credentialFor("/summarize"), resourceOf("/summarize"));
    const charges = double.charges;
    const [one, two] = await Promise.all([rail.settle(payment), rail.settle(payment)]);
    expect(one.kind).toBe("settled");
    expect(two.kind).toBe("settled");
    expect(one.kind === "settled" && two.kind === "settled" && one.reference === two.reference).toBe(true);
    expect(double.charges).toBe(charges + 1);
  });

  it("gives money back through Stripe's refunds, once per key, never more than was paid", async () => {
    const payment = await verifyWith(rail, await credentialFor("/translate"), resourceOf("/translate"));
    const settled = await rail.settle(payment);
    if (settled.kind !== "settled") throw new Error(`not settled: ${JSON.stringify(settled)}`);
    const paid = [{ reference: settled.reference, amountMicros: payment.amountMicros }];
    const refund = rail.refund;
    const given = await refund(payment.payer, 300_000, paid, "refund-1");
    expect(given.kind).toBe("refunded");
    expect(double.captured.get(settled.reference)?.refunded).toBe(30);
    expect(await refund(payment.payer, 300_000, paid, "refund-1")).toMatchObject({ kind: "refunded" });
    expect(double.captured.get(settled.reference)?.refunded).toBe(30);

    expect(await rail.refund(payment.payer, 2_000_000, paid, "refund-2")).toMatchObject({ kind: "owed" });
    expect(await rail.refund(payment.payer, 5_000, paid, "refund-3")).toMatchObject({ kind: "owed" });
    expect(double.captured.get(settled.reference)?.refunded).toBe(30);

    // Stripe itself refuses more than is left on the payment (90 cents left, 100 asked).
    const tooMuch = await rail.refund(
      payment.payer,
      1_000_000,
      [{ reference: settled.reference, amountMicros: 1_200_000 }],
      "refund-4",
    );
    expect(tooMuch).toMatchObject({ kind: "owed" });
    expect(await rail.refund(payment.payer, 900_000, paid, "refund-5")).toMatchObject({ kind: "refunded" });
    expect(double.captured.get(settled.reference)?.refunded).toBe(120);
  });
});
