import { randomUUID } from "node:crypto";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { and, eq, sql } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applications, invocations, ledgerAccounts, x402Payments } from "../../../db/schema/index.ts";
import type { AppError } from "../../../lib/errors.ts";
import { createPromptApp } from "../../../test/live-app.ts";
import { expectReconciled } from "../../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../../test/use-test-server.ts";
import {
  BURN_ADDRESS,
  type SettlementMode,
  startX402Facilitator,
  X402_TEST_PAY_TO,
  type X402Facilitator,
  x402Wallet,
} from "../../../test/x402-facilitator.ts";
import { type InvocationRecord, recordInvocation } from "../../analytics/call-records.ts";
import { reconcile } from "../reconcile.ts";
import { admitX402Payment, endX402Payment, sweepX402Payments } from "./x402-payments.ts";
import { createX402Rail, type X402Rail } from "./x402-rail.ts";

// The x402 sweep (docs/decisions/052, 064): what a crash or a lost settlement leaves behind is
// settled, recorded and posted once, credited to its payer when its answer was never given, or
// never settled; the ledger reconciles either way, and x402_clearing is what the chain moved to
// the receiving address, to the micro-dollar.

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
  rail = createX402Rail(config, { fetchTimeoutMs: 3_000 });
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

const sweep = (options: { expiryMarginSeconds?: number } = {}) =>
  sweepX402Payments(db(), rail, log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0, ...options });
const paymentRow = async (id: string) =>
  (await db().select().from(x402Payments).where(eq(x402Payments.id, id)))[0];
const invocationRow = async (id: string) =>
  (await db().select().from(invocations).where(eq(invocations.id, id)))[0];
/** Reconciled, and the chain's transfers to the receiving address are x402_clearing's, to the µ$. */
async function expectMatchesChain(when: string) {
  await expectReconciled(db(), when);
  const report = await reconcile(db(), { x402Transfers: await rail.transfersToPayTo() });
  expect(report.x402TransfersDiffer, when).toEqual([]);
  const transferred = facilitator.receivedBy(X402_TEST_PAY_TO);
  const [clearing] = await db()
    .select({ balance: sql<string>`coalesce(sum(${ledgerAccounts.balanceMicros}), 0)::text` })
    .from(ledgerAccounts)
    .where(eq(ledgerAccounts.kind, "x402_clearing"));
  expect(0 - Number(clearing?.balance ?? 0) || 0, when).toBe(Number(transferred));
}
/** What the payer's account-less user holds as credit (its wallet). */
async function creditOf(payerUserId: string): Promise<number> {
  const [row] = await db()
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, payerUserId), eq(ledgerAccounts.kind, "wallet")));
  return Number(row?.balance ?? 0);
}
const endOptions = (recorded: InvocationRecord[] = []) => ({
  feePercent: 10,
  recordFailed: async (record: InvocationRecord) => {
    recorded.push(record);
    await recordInvocation(db(), record);
  },
  log,
});
/** Ends an answered call's payment with the facilitator in `mode` for it; the error it threw, if any. */
async function endAs(mode: SettlementMode) {
  const { wallet, header } = await signedPayment();
  const admitted = await admitX402Payment(db(), rail, header, resource());
  facilitator.settleAs(wallet.address, admitted.decoded.identity.nonce, mode);
  const record = recordFor(admitted.payerUserId);
  const error = await endX402Payment(db(), rail, admitted, record, endOptions()).then(
    (charge) => {
      expect(charge.chargedCents).toBe(PRICE_CENTS);
      return undefined;
    },
    (thrown: unknown) => thrown as AppError,
  );
  return { wallet, admitted, record, error };
}

describe("the x402 sweep", () => {
  it("a payment whose call never ended (verified) is failed and never settled", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed", txHash: null });
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a stale verified payment");
  });

  it("a crash before the settlement (settling, nothing recorded): never settled, failed once its authorization expired unused", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    await markSettling(admitted.id, record);
    const settles = facilitator.requests.settle;
    await sweep();
    // Not on chain yet, and it may still be broadcast until it expires: pending, never settled by us.
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    await sweep({ expiryMarginSeconds: -86_400 });
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed" });
    expect(facilitator.requests.settle).toBe(settles);
    expect(await invocationRow(record.id)).toBeUndefined();
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a crash before the settlement");
  });

  it("a crash after the settlement, before the record: the answer was never given, so the sweep credits the payer, once", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    await markSettling(admitted.id, record);
    const settled = await rail.settle(admitted.decoded);
    if (settled.kind !== "settled") throw new Error(`not settled: ${settled.kind}`);
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await sweep();
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "credited", txHash: settled.transaction });
    expect(await invocationRow(record.id)).toMatchObject({ status: "error", chargedCents: 0 });
    expect(await creditOf(admitted.payerUserId)).toBe(40_000);
    await expectMatchesChain("a crash after the settlement");
  });

  it("two sweepers at once on one confirmed payment: credited once", async () => {
    const { admitted, error } = await endAs("pending");
    expect(error?.status).toBe(503);
    facilitator.mine();
    const ended = await Promise.all([sweep(), sweep(), sweep()]);
    expect(ended.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "credited" });
    expect(await creditOf(admitted.payerUserId)).toBe(40_000);
    await expectMatchesChain("two sweepers");
  });
});

describe("a facilitator that fails after it moved the money (decision 064)", () => {
  it("settlement_pending with a transaction: 503 with Retry-After, no answer, nothing charged; mined, the sweep credits the payer", async () => {
    const { wallet, admitted, record, error } = await endAs("pending");
    expect(error?.status).toBe(503);
    expect(error?.headers?.["retry-after"]).toBe("30");
    expect(error?.message).toContain(admitted.id);
    const row = await paymentRow(admitted.id);
    expect(row).toMatchObject({ status: "settling" });
    expect(row?.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await invocationRow(record.id)).toMatchObject({
      status: "error",
      errorType: "payment_pending",
      chargedCents: 0,
    });
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    await expectMatchesChain("pending, not mined");
    expect(facilitator.mine()).toBeGreaterThanOrEqual(1);
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "credited", txHash: row?.txHash });
    expect(await creditOf(admitted.payerUserId)).toBe(40_000);
    await expectMatchesChain("pending, mined and credited");
  });

  for (const mode of ["error-after-move", "empty-transaction", "lost"] as const) {
    it(`${mode}: the chain confirms the transfer, so the call is answered and charged once, with the chain's transaction`, async () => {
      const { wallet, admitted, record, error } = await endAs(mode);
      expect(error).toBeUndefined();
      const [transfer] = facilitator.transfers.filter((t) => t.nonce === admitted.decoded.identity.nonce);
      expect(transfer?.to).toBe(X402_TEST_PAY_TO);
      expect(await paymentRow(admitted.id)).toMatchObject({
        status: "settled",
        txHash: transfer?.transaction,
      });
      expect(await invocationRow(record.id)).toMatchObject({ status: "success", chargedCents: PRICE_CENTS });
      expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
      await expectMatchesChain(mode);
    });
  }

  it("burn: the payer used its nonce for its own transfer while our answer was lost → refused 402, failed, nothing counted as settled", async () => {
    const { wallet, admitted, record, error } = await endAs("burn");
    expect(error?.status).toBe(402);
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed" });
    expect(await invocationRow(record.id)).toMatchObject({ status: "error", chargedCents: 0 });
    expect(facilitator.balanceOf(BURN_ADDRESS)).toBeGreaterThanOrEqual(40_000n);
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await expectMatchesChain("a burnt nonce");
  });

  it("hang (nothing moved, no answer): 503, pending until the authorization expires, then failed; nothing charged", async () => {
    const { wallet, admitted, error } = await endAs("hang");
    expect(error?.status).toBe(503);
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    await sweep({ expiryMarginSeconds: -86_400 });
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "failed" });
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a hung settlement");
  });

  it("no answer, then the facilitator refuses, then the transfer lands late: pending until then (never failed early), then credited", async () => {
    const { wallet, admitted, error } = await endAs("hang");
    expect(error?.status).toBe(503);
    facilitator.settleAs(wallet.address, admitted.decoded.identity.nonce, "refuse");
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    facilitator.relay(admitted.decoded.payload);
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "credited" });
    expect(await creditOf(admitted.payerUserId)).toBe(40_000);
    await expectMatchesChain("a late transfer");
  });

  it("without the chain (no X402_RPC_URL), success with an empty transaction is not a settlement: 503, and reconcile names the transfer nothing clears", async () => {
    const config = server.config.x402;
    if (!config) throw new Error("x402 is off");
    const blind = createX402Rail({ ...config, rpcUrl: undefined }, { fetchTimeoutMs: 3_000 });
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), blind, header, resource());
    facilitator.settleAs(wallet.address, admitted.decoded.identity.nonce, "empty-transaction");
    const error = await endX402Payment(
      db(),
      blind,
      admitted,
      recordFor(admitted.payerUserId),
      endOptions(),
    ).catch((thrown: AppError) => thrown);
    expect((error as AppError).status).toBe(503);
    expect(facilitator.balanceOf(wallet.address)).toBe(60_000n);
    await sweepX402Payments(db(), blind, log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0 });
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settling" });
    const report = await reconcile(db(), { x402Transfers: await rail.transfersToPayTo() });
    const [transfer] = facilitator.transfers.filter((t) => t.nonce === admitted.decoded.identity.nonce);
    expect(report.x402TransfersDiffer).toContain(
      `transfer ${transfer?.transaction} from ${wallet.address.toLowerCase()}: 40000 µ$ reached the receiving address, no x402 payment clears it`,
    );
    // With the chain, the sweep finds the transfer: credited (the answer was not given).
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "credited" });
    await expectMatchesChain("credited after the chain was asked");
  });

  it("before decision 064, an answered call recorded as charged while its settlement had no answer: the sweep posts it once confirmed", async () => {
    const { wallet, header } = await signedPayment();
    const admitted = await admitX402Payment(db(), rail, header, resource());
    const record = recordFor(admitted.payerUserId);
    await markSettling(admitted.id, record);
    await recordInvocation(db(), { ...record, chargedCents: PRICE_CENTS });
    facilitator.settleAs(wallet.address, admitted.decoded.identity.nonce, "lost");
    expect((await rail.settle(admitted.decoded)).kind).toBe("pending");
    await sweep();
    expect(await paymentRow(admitted.id)).toMatchObject({ status: "settled" });
    await expectMatchesChain("a legacy settling payment");
  });
});

describe("reconcile against the chain", () => {
  it("names a settled payment the chain has no transfer for, and a transfer no payment clears, with the amounts", async () => {
    const [settled] = await db()
      .select()
      .from(x402Payments)
      .where(eq(x402Payments.status, "settled"))
      .limit(1);
    if (!settled) throw new Error("no settled payment");
    const transfers = (await rail.transfersToPayTo()) ?? [];
    const without = transfers.filter((t) => t.transaction !== settled.txHash);
    const report = await reconcile(db(), { x402Transfers: without });
    expect(report.ok).toBe(false);
    expect(report.x402TransfersDiffer).toContain(
      `x402 payment ${settled.id} (settled, tx ${settled.txHash}): cleared ${settled.amountMicros} µ$, no transfer to the receiving address`,
    );
    const extra = { transaction: `0x${"ab".repeat(32)}`, from: settled.payer, valueMicros: 7 };
    const more = await reconcile(db(), { x402Transfers: [...transfers, extra] });
    expect(more.x402TransfersDiffer).toContain(
      `transfer ${extra.transaction} from ${settled.payer}: 7 µ$ reached the receiving address, no x402 payment clears it`,
    );
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
