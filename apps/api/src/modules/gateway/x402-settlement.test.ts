import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { and, eq, sql } from "drizzle-orm";
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

// Decision 064 at the HTTP boundary: what an x402 payer gets when the facilitator answers
// pending, errors after moving the money, answers success with no transaction, loses its answer,
// or the payer burns its own nonce; a streamed payer who leaves during settlement; and a payer's
// identity that no user can take by choosing a username.

const PRICE_CENTS = 5;
const { server, facilitator } = useX402Server();
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

async function creditOf(payerUserId: string): Promise<number> {
  const [row] = await db()
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, payerUserId), eq(ledgerAccounts.kind, "wallet")));
  return Number(row?.balance ?? 0);
}

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

describe("an x402 settlement that is not a plain success (decision 064)", () => {
  for (const response_mode of ["blocking", "streaming"] as const) {
    it(`${response_mode}: settlement_pending → no answer, 503 with Retry-After and the payment's id (blocking) or an error event; mined later, the payer keeps the money as credit`, async () => {
      const { agent, header, payer } = await paymentIn("pending");
      const answer = await call(header, response_mode);
      expect(answer.text).not.toContain("secret");
      const payment = await paymentOf(payer);
      if (response_mode === "blocking") {
        expect(answer.status).toBe(503);
        expect(answer.headers.get("retry-after")).toBe("30");
        expect(answer.headers.get("x402-payment-id")).toBe(payment.id);
        expect(answer.text).toContain(payment.id);
      } else {
        expect(answer.status).toBe(200);
        expect(answer.text).toContain("not confirmed yet");
      }
      expect(payment).toMatchObject({ status: "settling" });
      const [invocation] = await db()
        .select()
        .from(invocations)
        .where(eq(invocations.id, payment.invocationId ?? ""));
      expect(invocation).toMatchObject({ status: "error", errorType: "payment_pending", chargedCents: 0 });
      await expectMatchesChain("pending, not mined");
      facilitator.mine();
      expect(facilitator.balanceOf(agent.address)).toBe(1_000_000n - BigInt(PRICE_CENTS * 10_000));
      await sweep();
      expect(await paymentOf(payer)).toMatchObject({ status: "credited" });
      expect(await creditOf(payment.payerUserId)).toBe(PRICE_CENTS * 10_000);
      await expectMatchesChain("pending, mined, credited");
    });

    for (const mode of ["error-after-move", "empty-transaction", "lost"] as const) {
      it(`${response_mode}: ${mode} → the chain confirms the transfer: answered and charged once, with the chain's transaction`, async () => {
        const { header, payer } = await paymentIn(mode);
        const answer = await call(header, response_mode);
        expect(answer.status).toBe(200);
        expect(answer.text).toContain("secret");
        const payment = await paymentOf(payer);
        const [transfer] = facilitator.transfers.filter((t) => t.nonce === payment.nonce);
        expect(payment).toMatchObject({ status: "settled", txHash: transfer?.transaction });
        if (response_mode === "blocking")
          expect(decodePaymentResponseHeader(answer.headers.get("payment-response") ?? "")).toMatchObject({
            success: true,
            transaction: transfer?.transaction,
          });
        await expectMatchesChain(mode);
      });
    }

    it(`${response_mode}: the payer burns its nonce while our answer is lost → 402 (or an error event), no answer, not settled`, async () => {
      const { header, payer } = await paymentIn("burn");
      const answer = await call(header, response_mode);
      expect(answer.status).toBe(response_mode === "blocking" ? 402 : 200);
      expect(answer.text).not.toContain("secret");
      expect(answer.text).toContain("another transfer");
      expect(await paymentOf(payer)).toMatchObject({ status: "failed" });
      await expectMatchesChain("a burnt nonce");
    });
  }

  for (const response_mode of ["streaming", "blocking"] as const)
    it(`${response_mode}: the payer leaves while its payment settles → given nothing, not charged, the money kept as its credit`, async () => {
      const { header, payer } = await paymentIn("settle");
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
      expect(payment).toMatchObject({ status: "credited" });
      expect(received.join("")).not.toContain("secret");
      const [invocation] = await db()
        .select()
        .from(invocations)
        .where(eq(invocations.id, payment.invocationId ?? ""));
      expect(invocation).toMatchObject({ status: "error", errorType: "caller_left", chargedCents: 0 });
      expect(await creditOf(payment.payerUserId)).toBe(PRICE_CENTS * 10_000);
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
