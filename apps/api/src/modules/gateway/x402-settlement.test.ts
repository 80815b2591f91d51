import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { and, eq, inArray, sql } from "drizzle-orm";
import pino from "pino";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { invocations, ledgerAccounts, users, x402Payments } from "../../db/schema/index.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import {
  type SettlementMode,
  X402_TEST_NETWORK,
  X402_TEST_PAY_TO,
  x402Wallet,
} from "../../test/x402-facilitator.ts";
import { sweepX402Payments } from "../billing/agent-payments/x402-payments.ts";
import { createX402Rail } from "../billing/agent-payments/x402-rail.ts";
import { reconcile } from "../billing/reconcile.ts";

// Decision 064 at the HTTP boundary, since issue 40 (decision 070: settled first, into the payer's
// balance): what an x402 payer gets when the facilitator answers pending, errors after moving the
// money, answers success with no transaction, loses its answer, or the payer burns its own nonce;
// a payer who leaves during settlement; and a payer's identity that no user can take by choosing
// a username.

const PRICE_CENTS = 5;
const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "Settlement Seller");
const chooser = useCaller(server, "Name Chooser");
let slug = "";

beforeAll(async () => {
  const app = await createPromptApp(
    creator,
    { name: "Settled", interaction_mode: "completion", visibility: "public", price_cents: PRICE_CENTS },
    { model: "gpt-4-turbo" },
  );
  const live = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
    body: { status: "live" },
  });
  expect(live.status).toBe(200);
  slug = app.slug;
});

const db = () => server.database.db;
const log = pino({ level: "silent" });
const url = () => `${server.baseUrl}/api/app/${slug}/completion-messages`;
const bodyOf = (mode: "blocking" | "streaming") =>
  JSON.stringify({ inputs: {}, query: "secret answer please", response_mode: mode, user: "agent" });
const rail = () => {
  const config = server.config.x402;
  if (!config) throw new Error("x402 is off");
  return createX402Rail(config, { fetchTimeoutMs: 2_000 });
};
const sweep = () => sweepX402Payments(db(), rail(), log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0 });
const PRICE_MICROS = PRICE_CENTS * 10_000;
/** The creator's earnings (what the payer's calls paid it once their lease closed), in µ$. */
const earningsOfCreator = async (): Promise<number> =>
  (await creator.api("GET", "/api/wallet/")).body.earnings_micros;

/** A funded wallet's signed payment for one call, and the facilitator set to settle it in `mode`. */
async function paymentIn(mode: SettlementMode) {
  const agent = x402Wallet();
  facilitator.mint(agent.address, 1_000_000n);
  const challenge = await fetch(url(), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: bodyOf("blocking"),
  });
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const payload = await agent.client.createPaymentPayload(required);
  const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
  facilitator.settleAs(agent.address, nonce, mode);
  return { agent, header: encodePaymentSignatureHeader(payload), payer: agent.address.toLowerCase() };
}

async function call(header: string, mode: "blocking" | "streaming") {
  const response = await fetch(url(), {
    method: "POST",
    headers: { "content-type": "application/json", "payment-signature": header },
    body: bodyOf(mode),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function paymentOf(payer: string) {
  const [row] = await db().select().from(x402Payments).where(eq(x402Payments.payer, payer));
  if (!row) throw new Error(`no payment from ${payer}`);
  return row;
}

/** The payer's account-less user's wallet and what it holds for calls in flight, in µ$. */
async function balanceOf(payerUserId: string): Promise<{ wallet: number; held: number }> {
  const rows = await db()
    .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, payerUserId), inArray(ledgerAccounts.kind, ["wallet", "held"])));
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.balance ?? 0);
  return { wallet: of("wallet"), held: of("held") };
}

/** The payer's balance once nothing is held: its lease's unspent rest goes back when it idles out (leases.ts). */
async function settledBalanceOf(payerUserId: string): Promise<{ wallet: number; held: number }> {
  await vi.waitFor(async () => expect((await balanceOf(payerUserId)).held).toBe(0), { timeout: 15_000 });
  return balanceOf(payerUserId);
}

/** The calls recorded for the payer's account-less user (the caller of its wallet calls). */
const callsOf = (payerUserId: string) =>
  db().select().from(invocations).where(eq(invocations.callerUserId, payerUserId));

/** Reconciled, and x402_clearing is what the chain moved to the receiving address, to the µ$. */
async function expectMatchesChain(when: string) {
  await expectReconciled(db(), when);
  const report = await reconcile(db(), { x402Transfers: await rail().transfersToPayTo() });
  expect(report.x402TransfersDiffer, when).toEqual([]);
  const [clearing] = await db()
    .select({ balance: sql<string>`coalesce(sum(${ledgerAccounts.balanceMicros}), 0)::text` })
    .from(ledgerAccounts)
    .where(eq(ledgerAccounts.kind, "x402_clearing"));
  expect(0 - Number(clearing?.balance ?? 0) || 0, when).toBe(
    Number(facilitator.receivedBy(X402_TEST_PAY_TO)),
  );
}

// Since issue 40 (docs/decisions/070) a payment is settled before its call runs and credited to
// its payer's balance; the call is then an ordinary wallet call of the payer's account-less user.
// Whatever the facilitator does, the call runs only on money that arrived, and money that arrived
// is never lost: on the payer's balance, or spent on the one call it paid for.
describe("an x402 settlement that is not a plain success (decision 064, paid into a balance)", () => {
  for (const response_mode of ["blocking", "streaming"] as const) {
    it(`${response_mode}: settlement_pending → 503 with Retry-After and the payment's id, the call never ran; mined later, the sweep credits the payer's wallet`, async () => {
      const { agent, header, payer } = await paymentIn("pending");
      const vendorCalls = vendor.requests.length;
      const answer = await call(header, response_mode);
      const payment = await paymentOf(payer);
      // A stream never starts: the settlement comes before the call, so a 503 rather than an event.
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("30");
      expect(answer.headers.get("promptmint-payment-id")).toBe(payment.id);
      expect(answer.headers.get("payment-response")).toBeNull();
      expect(answer.text).toContain(payment.id);
      expect(answer.text).not.toContain("secret");
      expect(vendor.requests.length).toBe(vendorCalls);
      expect(payment).toMatchObject({ status: "settling", invocationId: null, callRecord: null });
      expect(await callsOf(payment.payerUserId)).toEqual([]);
      expect(await balanceOf(payment.payerUserId)).toEqual({ wallet: 0, held: 0 });
      await sweep();
      expect(await paymentOf(payer)).toMatchObject({ status: "settling" });
      await expectMatchesChain("pending, not mined");
      facilitator.mine();
      expect(facilitator.balanceOf(agent.address)).toBe(1_000_000n - BigInt(PRICE_MICROS));
      await sweep();
      expect(await paymentOf(payer)).toMatchObject({ status: "credited", invocationId: null });
      expect(await balanceOf(payment.payerUserId)).toEqual({ wallet: PRICE_MICROS, held: 0 });
      expect(await callsOf(payment.payerUserId)).toEqual([]);
      await sweep();
      expect(await balanceOf(payment.payerUserId)).toEqual({ wallet: PRICE_MICROS, held: 0 });
      await expectMatchesChain("pending, mined, credited");
    });

    for (const mode of ["error-after-move", "empty-transaction", "lost"] as const) {
      it(`${response_mode}: ${mode} → the chain confirms the transfer: credited with the chain's transaction, the call answered and charged from the balance once`, async () => {
        const { header, payer } = await paymentIn(mode);
        const earningsBefore = await earningsOfCreator();
        const answer = await call(header, response_mode);
        expect(answer.status).toBe(200);
        expect(answer.text).toContain("secret");
        const payment = await paymentOf(payer);
        const [transfer] = facilitator.transfers.filter((t) => t.nonce === payment.nonce);
        expect(transfer?.to).toBe(X402_TEST_PAY_TO);
        expect(payment).toMatchObject({
          status: "credited",
          txHash: transfer?.transaction,
          invocationId: null,
        });
        // Set before the call ran: a stream carries them too.
        expect(answer.headers.get("promptmint-payment-id")).toBe(payment.id);
        expect(decodePaymentResponseHeader(answer.headers.get("payment-response") ?? "")).toMatchObject({
          success: true,
          transaction: transfer?.transaction,
        });
        const calls = await callsOf(payment.payerUserId);
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({ status: "success", chargedCents: PRICE_CENTS });
        if (response_mode === "blocking")
          expect(JSON.parse(answer.text).metadata.usage).toMatchObject({
            charged_cents: PRICE_CENTS,
            paid_by: "wallet",
          });
        else expect(answer.text).toContain('"paid_by":"wallet"');
        expect(await settledBalanceOf(payment.payerUserId)).toEqual({ wallet: 0, held: 0 });
        expect(await earningsOfCreator()).toBeGreaterThan(earningsBefore);
        await expectMatchesChain(mode);
      });
    }

    it(`${response_mode}: the payer burns its nonce while our answer is lost → 402 payment_refused, the call never ran, nothing credited`, async () => {
      const { header, payer } = await paymentIn("burn");
      const vendorCalls = vendor.requests.length;
      const answer = await call(header, response_mode);
      expect(answer.status).toBe(402);
      expect(answer.text).not.toContain("secret");
      expect(answer.text).toContain("another transfer");
      expect(answer.text).toContain("payment_refused");
      expect(vendor.requests.length).toBe(vendorCalls);
      const payment = await paymentOf(payer);
      expect(payment).toMatchObject({ status: "failed" });
      expect(await callsOf(payment.payerUserId)).toEqual([]);
      expect(await balanceOf(payment.payerUserId)).toEqual({ wallet: 0, held: 0 });
      await expectMatchesChain("a burnt nonce");
    });
  }

  for (const response_mode of ["streaming", "blocking"] as const)
    it(`${response_mode}: the payer leaves while its payment settles → given nothing, charged for no call, the money on its balance`, async () => {
      const { header, payer } = await paymentIn("settle");
      const vendorCalls = vendor.requests.length;
      const paused = facilitator.pauseSettlements();
      let socket: import("node:net").Socket | undefined;
      server.app.server.once("connection", (accepted) => {
        socket = accepted;
      });
      const received: string[] = [];
      const request = http.request(url(), {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "payment-signature": header },
      });
      request.on("response", (response) => response.on("data", (chunk) => received.push(String(chunk))));
      request.on("error", () => {});
      request.end(bodyOf(response_mode));
      await paused.arrived;
      request.destroy();
      await vi.waitFor(() => expect(socket?.destroyed).toBe(true), { timeout: 10_000 });
      paused.release();
      await vi.waitFor(async () => expect((await paymentOf(payer)).status).not.toBe("settling"), {
        timeout: 20_000,
      });
      const payment = await paymentOf(payer);
      expect(payment).toMatchObject({ status: "credited", invocationId: null });
      expect(received.join("")).not.toContain("secret");
      expect(await settledBalanceOf(payment.payerUserId)).toEqual({ wallet: PRICE_MICROS, held: 0 });
      // Its call never ran: no model call, no invocation, nothing held or charged.
      expect(vendor.requests.length).toBe(vendorCalls);
      expect(await callsOf(payment.payerUserId)).toEqual([]);
      await expectMatchesChain(`a ${response_mode} payer who left during settlement`);
    });
});

describe("payer identities in their own namespace", () => {
  it("a user who takes the old-style payer name (x402-<network>-<address>) cannot make that address's calls fail: they answer 200", async () => {
    const { header, payer } = await paymentIn("settle");
    const profile = await chooser.api("GET", "/api/auth/profile/");
    expect(profile.status).toBe(200);
    const taken = `X402-EIP15584532-${payer.toUpperCase()}`;
    const renamed = await chooser.api("PATCH", "/api/auth/profile/", {
      body: { user: { ...profile.body.user, username: taken }, creator: null },
    });
    expect(renamed.status).toBe(200);
    const answer = await call(header, "blocking");
    expect(answer.status).toBe(200);
    const [payerUser] = await db()
      .select()
      .from(users)
      .where(and(eq(users.issuer, "x402"), eq(users.subject, `${X402_TEST_NETWORK}:${payer}`)));
    expect(payerUser?.username).toBe(`x402:${X402_TEST_NETWORK}:${payer}`);
    await expectMatchesChain("a payer whose old name a user took");
  });

  it("migration 0048 moves an earlier payer's x402-<network>-<address> name into the payers' namespace", async () => {
    const address = `0x${"3".repeat(40)}`;
    const [old] = await db()
      .insert(users)
      .values({
        issuer: "x402",
        subject: `${X402_TEST_NETWORK}:${address}`,
        username: `x402-eip15584532-${address}`,
        email: "",
        displayName: "x402 payer",
      })
      .returning();
    const migration = readFileSync(
      path.join(
        path.dirname(fileURLToPath(import.meta.url)),
        "../../db/migrations/0048_x402_pending_and_payers.sql",
      ),
      "utf8",
    );
    const rename = migration
      .split("--> statement-breakpoint")
      .find((part) => part.includes('UPDATE "users"'));
    if (!rename) throw new Error("0048 renames no payer");
    await db().execute(sql.raw(rename));
    const [moved] = await db()
      .select()
      .from(users)
      .where(eq(users.id, old?.id ?? ""));
    expect(moved?.username).toBe(`x402:${X402_TEST_NETWORK}:${address}`);
  });

  it("a username in the payers' namespace (x402:<network>:<address>) → refused 400 naming user.username", async () => {
    const profile = await chooser.api("GET", "/api/auth/profile/");
    const renamed = await chooser.api("PATCH", "/api/auth/profile/", {
      body: {
        user: { ...profile.body.user, username: `x402:${X402_TEST_NETWORK}:0x${"1".repeat(40)}` },
        creator: null,
      },
    });
    expect(renamed.status).toBe(400);
    expect(JSON.stringify(renamed.body)).toContain("user.username");
  });
});
