import { randomUUID } from "node:crypto";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { eq } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applications, invocations, x402Payments } from "../../../db/schema/index.ts";
import { createPromptApp } from "../../../test/live-app.ts";
import { expectReconciled } from "../../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../../test/use-test-server.ts";
import { startX402Facilitator, type X402Facilitator, x402Wallet } from "../../../test/x402-facilitator.ts";
import type { InvocationRecord } from "../../analytics/call-records.ts";
import { reconcile } from "../reconcile.ts";
import { admitX402Payment, endX402Payment, sweepX402Payments } from "./x402-payments.ts";
import { createX402Rail, type X402Rail } from "./x402-rail.ts";

// The x402 sweep (docs/decisions/052): what a crash or a lost settlement leaves behind is
// settled, recorded and posted once, or never settled, and the ledger reconciles either way.

const PRICE_CENTS = 4;
const log = pino({ level: "silent" });
const facilitator = {} as X402Facilitator;
beforeAll(async () => {
  Object.assign(facilitator, await startX402Facilitator());
});
afterAll(() => facilitator.stop?.());
const server = useTestServer(() => ({ env: facilitator.env() }));
const creator = useCaller(server, "Sweep Seller");
const app = { id: "", slug: "" };
let rail: X402Rail;

beforeAll(async () => {
  // On the sandbox model, which any price covers (the starter model's floor is above 4¢, issue 32).
  const { slug } = await createPromptApp(
    creator,
    {
      name: "Sweep App",
      description: "d",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
    { model: "sandbox" },
  );
  const live = await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  expect(live.status).toBe(200);
  const [row] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  Object.assign(app, { id: row?.id, slug });
  const config = server.config.x402;
  if (!config) throw new Error("x402 is off");
  // A short facilitator timeout: a settlement that hangs is one without an answer.
  rail = createX402Rail(config, { fetchTimeoutMs: 500 });
});

const db = () => server.database.db;
const resource = () => ({
  priceCents: PRICE_CENTS,
  url: `${server.baseUrl}/api/app/${app.slug}/completion-messages`,
  description: "sweep",
  applicationId: app.id,
});

/** A wallet's signed payment for one call, as @x402/fetch would send it. */
async function signedPayment() {
  const wallet = x402Wallet();
  facilitator.mint(wallet.address, 100_000n);
  const refusal = await rail.refuse(resource());
  const required = decodePaymentRequiredHeader(refusal.headers?.["payment-required"] ?? "");
  const header = encodePaymentSignatureHeader(await wallet.client.createPaymentPayload(required));
  return { wallet, header };
}

function recordFor(payerUserId: string): InvocationRecord {
  return {
    id: randomUUID(),
    applicationId: app.id,
    callerUserId: payerUserId,
    apiKeyId: null,
    endUser: null,
    mode: "completion",
    model: "sandbox",
    status: "success",
    latencyMs: 12,
    inputTokens: 3,
    outputTokens: 5,
    modelCostMicros: 0,
    conversation: null,
  };
}

/** The payment marked `settling` with its call's record, as its call's end does before settling. */
async function markSettling(paymentId: string, record: InvocationRecord) {
  record.chargedCents = PRICE_CENTS;
  record.createdAt = new Date();
  await db()
    .update(x402Payments)
    .set({ status: "settling", invocationId: record.id, callRecord: record, feePercent: "10" })
    .where(eq(x402Payments.id, paymentId));
}

const sweep = () => sweepX402Payments(db(), rail, log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0 });
const paymentRow = async (id: string) =>
  (await db().select().from(x402Payments).where(eq(x402Payments.id, id)))[0];
const invocationRow = async (id: string) =>
  (await db().select().from(invocations).where(eq(invocations.id, id)))[0];

describe("the x402 sweep", () => {
  it("a payment whose call never ended (verified) is failed and never settled", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed", txHash: null });
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectReconciled(db(), "a stale verified payment");
  });

  it("a crash before the settlement (settling, nothing recorded): never settled, no answer was given", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    await markSettling(admitted.id, record);
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed" });
    expect(await invocationRow(record.id)).toBeUndefined();
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectReconciled(db(), "a crash before the settlement");
  });

  it("a crash after the settlement, before the record: the sweep records and posts it, once", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    await markSettling(admitted.id, record);
    expect((await rail.settle(admitted.decoded)).kind).toBe("settled");
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await sweep();
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({
      status: "settled",
      txHash: `authorization-used:${admitted.decoded.identity.nonce}`,
    });
    expect(await invocationRow(record.id)).toMatchObject({ status: "success", chargedCents: PRICE_CENTS });
    await expectReconciled(db(), "a crash after the settlement");
  });

  it("a settlement without an answer: the call is recorded as charged, the sweep settles and posts it", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    facilitator.setSettlement("hang");
    try {
      const charge = await endX402Payment(db(), rail, admitted, record, {
        feePercent: 10,
        recordFailed: async () => {},
        log,
      });
      expect(charge).toEqual({ chargedCents: PRICE_CENTS });
    } finally {
      facilitator.setSettlement("settle");
    }
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    expect(await invocationRow(record.id)).toMatchObject({ status: "success", chargedCents: PRICE_CENTS });
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settled" });
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await expectReconciled(db(), "a settlement swept");
  });

  it("reconcile names a settled payment whose amount its charge and posting do not match, and an unpaid one", async () => {
    const [settled] = await db()
      .select()
      .from(x402Payments)
      .where(eq(x402Payments.status, "settled"))
      .limit(1);
    if (!settled) throw new Error("no settled payment");
    await db()
      .update(x402Payments)
      .set({ amountMicros: Number(settled.amountMicros) + 1 })
      .where(eq(x402Payments.id, settled.id));
    try {
      expect((await reconcile(db())).mismatchedX402Payments).toEqual([settled.id]);
    } finally {
      await db()
        .update(x402Payments)
        .set({ amountMicros: settled.amountMicros })
        .where(eq(x402Payments.id, settled.id));
    }
    await db().update(x402Payments).set({ status: "unpaid" }).where(eq(x402Payments.id, settled.id));
    try {
      expect((await reconcile(db())).mismatchedX402Payments).toEqual([settled.id]);
    } finally {
      await db().update(x402Payments).set({ status: "settled" }).where(eq(x402Payments.id, settled.id));
    }
    await expectReconciled(db(), "restored");
  });
});
