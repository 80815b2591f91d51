import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { invocations, ledgerAccounts, x402Payments } from "../../db/schema/index.ts";
import { fundWallet, settledWallet } from "../../test/caller.ts";
import { embedWidget } from "../../test/embed-widget.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import { x402Wallet } from "../../test/x402-facilitator.ts";

// A call's input is bounded by what it pays (docs/decisions/063), for the payers without a
// consumer's wallet: an agent paying with x402 (since issue 40 its payment is settled into its
// balance before the call is looked at: a refused call leaves the money there) and an embedded
// widget (its owner pays the whole price; the day's cap gets it back).

const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "Bound Agent Seller");
const SHOP = "https://shop.example";
const agent = x402Wallet();
const db = () => server.database.db;
const paymentsOfAgent = () =>
  db()
    .select()
    .from(x402Payments)
    .where(eq(x402Payments.payer, agent.address.toLowerCase()))
    .orderBy(x402Payments.createdAt);
const callsOf = (payerUserId: string) =>
  db().select().from(invocations).where(eq(invocations.callerUserId, payerUserId));
/** The payer's account-less user's wallet and what it holds for calls in flight, in µ$. */
async function balanceOf(payerUserId: string): Promise<{ wallet: number; held: number }> {
  const rows = await db()
    .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, payerUserId), inArray(ledgerAccounts.kind, ["wallet", "held"])));
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.balance ?? 0);
  return { wallet: of("wallet"), held: of("held") };
}

beforeAll(async () => {
  facilitator.mint(agent.address, 1_000_000n);
  await fundWallet(creator, 2_000);
});

describe("a call's input is bounded by what it pays", () => {
  it("x402: an agent's oversized call → its payment is credited to its balance first, the call refused 413 and charged nothing; the money stays on the payer's wallet", async () => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Bounded for agents", visibility: "public", price_cents: 7 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 512 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    const url = `${server.baseUrl}/api/app/${app.slug}/completion-messages`;
    const send = (query: string) =>
      agent.fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: {}, query, response_mode: "blocking" }),
      });
    const transfers = facilitator.transfers.length;
    const vendorCalls = vendor.requests.length;
    // 7¢ less 10% = 63,000 micros: (63,000 − 512 × 30) / 10 = 4,764 input tokens.
    const refused = await send("q".repeat(6_000));
    expect(refused.status).toBe(413);
    const body = await refused.json();
    expect(body).toMatchObject({ code: "input_too_large", status: 413 });
    expect(body.message).toContain("4,764 input tokens");
    expect(vendor.requests.length).toBe(vendorCalls);
    // Settled before the call was looked at (issue 40): the money arrived, and is the payer's.
    expect(facilitator.transfers.length).toBe(transfers + 1);
    const [payment] = await paymentsOfAgent();
    expect(payment).toMatchObject({ status: "credited", invocationId: null });
    expect(refused.headers.get("promptmint-payment-id")).toBe(payment?.id);
    const payerUserId = payment?.payerUserId ?? "";
    expect(await callsOf(payerUserId)).toEqual([]);
    expect(await balanceOf(payerUserId)).toEqual({ wallet: 70_000, held: 0 });
    await expectReconciled(server.database.db, "an agent's oversized call");

    const answered = await send("a haiku about rain");
    expect(answered.status).toBe(200);
    expect((await answered.json()).metadata.usage).toMatchObject({ charged_cents: 7, paid_by: "wallet" });
    expect(facilitator.transfers.length).toBe(transfers + 2);
    expect((await paymentsOfAgent()).map((row) => row.status)).toEqual(["credited", "credited"]);
    const calls = await callsOf(payerUserId);
    expect(calls.map((call) => [call.status, call.chargedCents])).toEqual([["success", 7]]);
    // Once its lease closed: two payments in, one call out; the first payment is still there.
    await vi.waitFor(async () => expect((await balanceOf(payerUserId)).held).toBe(0), { timeout: 15_000 });
    expect(await balanceOf(payerUserId)).toEqual({ wallet: 70_000, held: 0 });
    await expectReconciled(server.database.db, "an agent's oversized call, then a paid one");
  });

  it("embed: a visitor's oversized message is refused with 413; the owner pays nothing and the day's cap is untouched", async () => {
    const widget = embedWidget(server.baseUrl, SHOP);
    // A widget's query is at most 4,000 characters: gpt-4 with 3,700 tokens out leaves less room.
    const { slug } = await widget.createEmbedApp(creator, { prompt: { model: "gpt-4", max_tokens: 3_700 } });
    const { token } = await widget.loadWidget(slug, `${SHOP}/page`);
    expect(token).toBeDefined();
    const before = await settledWallet(creator);
    const vendorCalls = vendor.requests.length;
    // The owner pays the whole 25¢ (250,000 micros): (250,000 − 3,700 × 60) / 30 = 933 tokens.
    const refused = await widget.sendMessage(slug, token, { body: { query: "w".repeat(3_000) } });
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: "input_too_large" });
    expect(refused.body.message).toContain("933 input tokens");
    expect(vendor.requests.length).toBe(vendorCalls);
    expect((await settledWallet(creator)).balance_micros).toBe(before.balance_micros);
    const embed = await creator.api("GET", `/api/app/${slug}/embed`);
    expect(embed.body.spent_today_cents).toBe(0);
    const answered = await widget.sendMessage(slug, token, { body: { query: "Hello there" } });
    expect(answered.status).toBe(200);
    expect((await creator.api("GET", `/api/app/${slug}/embed`)).body.spent_today_cents).toBe(25);
  });
});
