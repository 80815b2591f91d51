import { randomUUID } from "node:crypto";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { and, eq, sql } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applications,
  invocations,
  ledgerAccounts,
  ledgerTransactions,
  x402Payments,
} from "../../../db/schema/index.ts";
import { AppError } from "../../../lib/errors.ts";
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
import { type AgentPaid, payerUserOf, payIntoBalance } from "./balances.ts";
import type { PaymentRail } from "./rail.ts";
import { sweepX402Payments, x402PaymentBook, x402PaymentRail } from "./x402-payments.ts";
import { createX402Rail, type DecodedPayment, type X402Rail } from "./x402-rail.ts";

// The x402 sweep (docs/decisions/052, 064, 070): since issue 40 a payment is settled first and
// credited to its payer's balance (balances.ts payIntoBalance). What a crash or a settlement with
// no clear answer leaves behind (a row `settling`, no call record) is resolved by the sweep, which
// only looks it up: credited once to the payer when the money arrived, failed when it never moved,
// never settled anew. Rows from before issue 40 (`verified`, or `settling` with their call's
// record) are still finished as before. The ledger reconciles either way, and x402_clearing is
// what the chain moved to the receiving address, to the micro-dollar.

const PRICE_CENTS = 4;
const PRICE_MICROS = PRICE_CENTS * 10_000;
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
let paymentRail: PaymentRail;

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
  paymentRail = x402PaymentRail(rail);
});

const db = () => server.database.db;
const book = (on: X402Rail = rail) => x402PaymentBook(db(), on);
const resource = () => ({
  priceCents: PRICE_CENTS,
  url: `${server.baseUrl}/api/app/${app.slug}/completion-messages`,
  description: "sweep",
  applicationId: app.id,
});

/** A wallet's signed payment for one call, as @x402/fetch would send it. */
async function signedPayment(on: PaymentRail = paymentRail) {
  const wallet = x402Wallet();
  facilitator.mint(wallet.address, 100_000n);
  const { "payment-required": required } = await on.challenge(resource());
  const payload = await wallet.client.createPaymentPayload(decodePaymentRequiredHeader(required ?? ""));
  const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
  return { wallet, header: encodePaymentSignatureHeader(payload), nonce };
}

/**
 * A payment written down `settling` under its identity and not settled (what a crash between
 * `claim` and `settle` leaves behind).
 */
async function claimed(on: X402Rail = rail) {
  const { wallet, header } = await signedPayment(x402PaymentRail(on));
  const paymentRail = x402PaymentRail(on);
  const verified = await paymentRail.verify(await paymentRail.decode(header, resource()), resource());
  const payerUserId = await payerUserOf(db(), verified.payer);
  const id = await book(on).claim(verified, payerUserId, app.id);
  if (!id) throw new Error("not claimed");
  return { wallet, verified, payerUserId, id, decoded: verified.state as DecodedPayment };
}

/** Pays a signed payment into its payer's balance with the facilitator in `mode` for it: what it gave, or what it threw. */
async function payAs(mode: SettlementMode, on: X402Rail = rail) {
  const { wallet, header, nonce } = await signedPayment(x402PaymentRail(on));
  facilitator.settleAs(wallet.address, nonce, mode);
  const outcome = await payIntoBalance(db(), x402PaymentRail(on), book(on), header, resource()).then(
    (paid): { paid: AgentPaid; error?: undefined } => ({ paid }),
    (thrown: unknown) => ({ paid: undefined, error: thrown as AppError }),
  );
  const row = await rowOf(wallet.address, nonce);
  return { wallet, nonce, row, ...outcome };
}

const sweep = (options: { expiryMarginSeconds?: number } = {}, on: X402Rail = rail) =>
  sweepX402Payments(db(), on, log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0, ...options });
const paymentRow = async (id: string) =>
  (await db().select().from(x402Payments).where(eq(x402Payments.id, id)))[0];
async function rowOf(address: string, nonce: string) {
  const [row] = await db()
    .select()
    .from(x402Payments)
    .where(and(eq(x402Payments.payer, address.toLowerCase()), eq(x402Payments.nonce, nonce.toLowerCase())));
  if (!row) throw new Error(`no payment row for ${address}`);
  return row;
}
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
/** What the payer's account-less user holds (its wallet). */
async function creditOf(payerUserId: string): Promise<number> {
  const [row] = await db()
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, payerUserId), eq(ledgerAccounts.kind, "wallet")));
  return Number(row?.balance ?? 0);
}
/** How many `x402_credit` transactions a payment posted (one, once credited; none otherwise). */
async function creditsOf(paymentId: string): Promise<number> {
  const rows = await db()
    .select({ id: ledgerTransactions.id })
    .from(ledgerTransactions)
    .where(and(eq(ledgerTransactions.kind, "x402_credit"), eq(ledgerTransactions.reference, paymentId)));
  return rows.length;
}

describe("a payment paid into its payer's balance (issue 40)", () => {
  it("settle: credited with its transaction, one x402_credit to the payer's wallet, PAYMENT-RESPONSE and the payment's id; the same payment again → 402 payment_already_used", async () => {
    const { wallet, header, nonce } = await signedPayment();
    const paid = await payIntoBalance(db(), paymentRail, book(), header, resource());
    const row = await rowOf(wallet.address, nonce);
    const [transfer] = facilitator.transfers.filter((t) => t.nonce === nonce);
    expect(row).toMatchObject({ status: "credited", txHash: transfer?.transaction, invocationId: null });
    expect(paid).toMatchObject({ payerUserId: row.payerUserId, paymentId: row.id, rail: "x402" });
    expect(paid.headers["promptmint-payment-id"]).toBe(row.id);
    expect(decodePaymentResponseHeader(paid.headers["payment-response"] ?? "")).toMatchObject({
      success: true,
      transaction: transfer?.transaction,
    });
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    expect(await creditsOf(row.id)).toBe(1);
    const again = await payIntoBalance(db(), paymentRail, book(), header, resource()).catch(
      (e: AppError) => e,
    );
    expect(again).toBeInstanceOf(AppError);
    expect((again as AppError).status).toBe(402);
    expect((again as AppError).message).toContain("already used");
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    await expectMatchesChain("a plain settlement");
  });
});

describe("the x402 sweep", () => {
  it("a crash after the claim, before the settlement (settling, no call record): never settled by the sweep, failed once its authorization expired unused", async () => {
    const { wallet, id, payerUserId } = await claimed();
    const settles = facilitator.requests.settle;
    await sweep();
    // Not on chain yet, and it may still be broadcast until it expires: pending, never settled by us.
    expect(await paymentRow(id)).toMatchObject({ status: "settling" });
    await sweep({ expiryMarginSeconds: -86_400 });
    expect(await paymentRow(id)).toMatchObject({ status: "failed", invocationId: null });
    expect(facilitator.requests.settle).toBe(settles);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    expect(await creditOf(payerUserId)).toBe(0);
    expect(await creditsOf(id)).toBe(0);
    await expectMatchesChain("a crash before the settlement");
  });

  it("a crash after the settlement, before the credit: the sweep finds the transfer and credits the payer, once", async () => {
    const { wallet, id, payerUserId, decoded } = await claimed();
    const settled = await rail.settle(decoded);
    if (settled.kind !== "settled") throw new Error(`not settled: ${settled.kind}`);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    const settles = facilitator.requests.settle;
    expect(await sweep()).toBe(1);
    expect(await sweep()).toBe(0);
    expect(await paymentRow(id)).toMatchObject({
      status: "credited",
      txHash: settled.transaction,
      invocationId: null,
    });
    expect(facilitator.requests.settle).toBe(settles);
    expect(await creditOf(payerUserId)).toBe(PRICE_MICROS);
    expect(await creditsOf(id)).toBe(1);
    await expectMatchesChain("a crash after the settlement");
  });

  it("a crash after the settlement, without the chain (no X402_RPC_URL): the facilitator's verify says the nonce is used, so it stays settling (never failed, never credited blind)", async () => {
    const config = server.config.x402;
    if (!config) throw new Error("x402 is off");
    const blind = createX402Rail({ ...config, rpcUrl: undefined }, { fetchTimeoutMs: 3_000 });
    const { id, decoded, payerUserId } = await claimed(blind);
    const settled = await blind.settle(decoded);
    expect(settled.kind).toBe("settled");
    await sweep({}, blind);
    expect(await paymentRow(id)).toMatchObject({ status: "settling" });
    expect(await creditOf(payerUserId)).toBe(0);
    // With the chain, the sweep finds the transfer: credited.
    await sweep();
    expect(await paymentRow(id)).toMatchObject({ status: "credited" });
    expect(await creditOf(payerUserId)).toBe(PRICE_MICROS);
    await expectMatchesChain("a blind sweep, then the chain");
  });

  it("two sweepers at once on one confirmed payment: credited once", async () => {
    const { row, error } = await payAs("pending");
    expect(error?.status).toBe(503);
    expect(facilitator.mine()).toBeGreaterThanOrEqual(1);
    const ended = await Promise.all([sweep(), sweep(), sweep()]);
    expect(ended.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await paymentRow(row.id)).toMatchObject({ status: "credited" });
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    expect(await creditsOf(row.id)).toBe(1);
    await expectMatchesChain("two sweepers");
  });
});

describe("a facilitator that fails after it moved the money (decision 064), paid into a balance", () => {
  it("settlement_pending with a transaction: 503 with Retry-After and the payment's id, nothing credited; mined, the sweep credits the payer", async () => {
    const { wallet, row, error, paid } = await payAs("pending");
    expect(paid).toBeUndefined();
    expect(error?.status).toBe(503);
    expect(error?.headers?.["retry-after"]).toBe("30");
    expect(error?.headers?.["promptmint-payment-id"]).toBe(row.id);
    expect(error?.message).toContain(row.id);
    expect(row).toMatchObject({ status: "settling", invocationId: null, callRecord: null });
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await creditOf(row.payerUserId)).toBe(0);
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "settling" });
    await expectMatchesChain("pending, not mined");
    expect(facilitator.mine()).toBeGreaterThanOrEqual(1);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "credited", txHash: row.txHash });
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    await expectMatchesChain("pending, mined and credited");
  });

  for (const mode of ["error-after-move", "empty-transaction", "lost"] as const) {
    it(`${mode}: the chain confirms the transfer, so the payment is credited once, with the chain's transaction`, async () => {
      const { wallet, nonce, row, error, paid } = await payAs(mode);
      expect(error).toBeUndefined();
      const [transfer] = facilitator.transfers.filter((t) => t.nonce === nonce);
      expect(transfer?.to).toBe(X402_TEST_PAY_TO);
      expect(row).toMatchObject({ status: "credited", txHash: transfer?.transaction, invocationId: null });
      expect(decodePaymentResponseHeader(paid?.headers["payment-response"] ?? "")).toMatchObject({
        success: true,
        transaction: transfer?.transaction,
      });
      expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
      expect(await creditsOf(row.id)).toBe(1);
      expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
      await sweep();
      expect(await creditsOf(row.id)).toBe(1);
      await expectMatchesChain(mode);
    });
  }

  it("burn: the payer used its nonce for its own transfer while our answer was lost → refused 402 payment_refused, failed, nothing credited", async () => {
    const { wallet, row, error } = await payAs("burn");
    expect(error?.status).toBe(402);
    expect(error?.message).toContain("another transfer");
    expect(row).toMatchObject({ status: "failed" });
    expect(await creditOf(row.payerUserId)).toBe(0);
    expect(facilitator.balanceOf(BURN_ADDRESS)).toBeGreaterThanOrEqual(BigInt(PRICE_MICROS));
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    await expectMatchesChain("a burnt nonce");
  });

  it("refuse: a definitive refusal → 402, failed, nothing moved, nothing credited", async () => {
    const { wallet, row, error } = await payAs("refuse");
    expect(error?.status).toBe(402);
    expect(error?.message).toContain("could not be settled");
    expect(row).toMatchObject({ status: "failed" });
    expect(await creditOf(row.payerUserId)).toBe(0);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a refused settlement");
  });

  it("hang (nothing moved, no answer): 503, pending until the authorization expires, then failed; nothing credited", async () => {
    const { wallet, row, error } = await payAs("hang");
    expect(error?.status).toBe(503);
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "settling" });
    await sweep({ expiryMarginSeconds: -86_400 });
    expect(await paymentRow(row.id)).toMatchObject({ status: "failed" });
    expect(await creditOf(row.payerUserId)).toBe(0);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a hung settlement");
  });

  it("no answer, then the facilitator refuses, then the transfer lands late: pending until then (never failed early), then credited", async () => {
    const { wallet, nonce, row, error } = await payAs("hang");
    expect(error?.status).toBe(503);
    facilitator.settleAs(wallet.address, nonce, "refuse");
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "settling" });
    facilitator.relay((row.payload ?? {}) as { payload?: unknown });
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "credited" });
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    await expectMatchesChain("a late transfer");
  });

  it("without the chain (no X402_RPC_URL), success with an empty transaction is not a settlement: 503, and reconcile names the transfer nothing clears", async () => {
    const config = server.config.x402;
    if (!config) throw new Error("x402 is off");
    const blind = createX402Rail({ ...config, rpcUrl: undefined }, { fetchTimeoutMs: 3_000 });
    const { wallet, nonce, row, error } = await payAs("empty-transaction", blind);
    expect(error?.status).toBe(503);
    expect(row).toMatchObject({ status: "settling" });
    expect(await creditOf(row.payerUserId)).toBe(0);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    await sweep({}, blind);
    expect(await paymentRow(row.id)).toMatchObject({ status: "settling" });
    const report = await reconcile(db(), { x402Transfers: await rail.transfersToPayTo() });
    const [transfer] = facilitator.transfers.filter((t) => t.nonce === nonce);
    expect(report.x402TransfersDiffer).toContain(
      `transfer ${transfer?.transaction} from ${wallet.address.toLowerCase()}: ${PRICE_MICROS} µ$ reached the receiving address, no x402 payment clears it`,
    );
    // With the chain, the sweep finds the transfer: credited.
    await sweep();
    expect(await paymentRow(row.id)).toMatchObject({ status: "credited" });
    expect(await creditOf(row.payerUserId)).toBe(PRICE_MICROS);
    await expectMatchesChain("credited after the chain was asked");
  });
});

describe("rows from before issue 40, finished as before", () => {
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

  /** The payment as its call's end left it before issue 40: `settling` with the call's record. */
  async function markSettling(paymentId: string, record: InvocationRecord) {
    record.chargedCents = PRICE_CENTS;
    record.createdAt = new Date();
    await db()
      .update(x402Payments)
      .set({ status: "settling", invocationId: record.id, callRecord: record, feePercent: "10" })
      .where(eq(x402Payments.id, paymentId));
  }

  it("a payment admitted for a call that never ended (verified) is failed and never settled", async () => {
    const { wallet, id } = await claimed();
    await db().update(x402Payments).set({ status: "verified" }).where(eq(x402Payments.id, id));
    const settles = facilitator.requests.settle;
    await sweep();
    expect(await paymentRow(id)).toMatchObject({ status: "failed", txHash: null });
    expect(facilitator.requests.settle).toBe(settles);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a stale verified payment");
  });

  it("settling with its call's record, crashed before the settlement: never settled, failed once its authorization expired unused, no invocation", async () => {
    const { wallet, id, payerUserId } = await claimed();
    const record = recordFor(payerUserId);
    await markSettling(id, record);
    const settles = facilitator.requests.settle;
    await sweep();
    expect(await paymentRow(id)).toMatchObject({ status: "settling" });
    await sweep({ expiryMarginSeconds: -86_400 });
    expect(await paymentRow(id)).toMatchObject({ status: "failed" });
    expect(facilitator.requests.settle).toBe(settles);
    expect(await invocationRow(record.id)).toBeUndefined();
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n);
    await expectMatchesChain("a legacy crash before the settlement");
  });

  it("settling with its call's record, crashed after the settlement before the record: the answer was never given, so the payer is credited once and the call recorded failed", async () => {
    const { wallet, id, payerUserId, decoded } = await claimed();
    const record = recordFor(payerUserId);
    await markSettling(id, record);
    const settled = await rail.settle(decoded);
    if (settled.kind !== "settled") throw new Error(`not settled: ${settled.kind}`);
    expect(facilitator.balanceOf(wallet.address)).toBe(100_000n - BigInt(PRICE_MICROS));
    await sweep();
    await sweep();
    expect(await paymentRow(id)).toMatchObject({ status: "credited", txHash: settled.transaction });
    expect(await invocationRow(record.id)).toMatchObject({ status: "error", chargedCents: 0 });
    expect(await creditOf(payerUserId)).toBe(PRICE_MICROS);
    expect(await creditsOf(id)).toBe(1);
    await expectMatchesChain("a legacy crash after the settlement");
  });

  it("an answered call recorded as charged while its settlement had no answer (before decision 064): the sweep posts it once confirmed, settled", async () => {
    const { wallet, id, payerUserId, decoded } = await claimed();
    const record = recordFor(payerUserId);
    await markSettling(id, record);
    await recordInvocation(db(), { ...record, chargedCents: PRICE_CENTS });
    facilitator.settleAs(wallet.address, decoded.identity.nonce, "lost");
    expect((await rail.settle(decoded)).kind).toBe("pending");
    await sweep();
    await sweep();
    expect(await paymentRow(id)).toMatchObject({ status: "settled" });
    expect(await creditOf(payerUserId)).toBe(0);
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

  it("names a credited payment the chain has no transfer for", async () => {
    const [credited] = await db()
      .select()
      .from(x402Payments)
      .where(eq(x402Payments.status, "credited"))
      .limit(1);
    if (!credited) throw new Error("no credited payment");
    const transfers = (await rail.transfersToPayTo()) ?? [];
    const report = await reconcile(db(), {
      x402Transfers: transfers.filter((t) => t.transaction !== credited.txHash),
    });
    expect(report.ok).toBe(false);
    expect(report.x402TransfersDiffer.join("\n")).toContain(credited.id);
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
