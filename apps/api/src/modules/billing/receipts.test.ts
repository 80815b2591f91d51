import { inflateSync } from "node:zlib";
import { eq, sql } from "drizzle-orm";
import { PDFDocument } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { organizations } from "../../db/schema/index.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { actingFor, insertOrganization, setMember } from "../../test/organizations.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { creditEarnings, daysAgo } from "../payouts/payouts-test-helpers.ts";

/**
 * Receipts (docs/decisions/069): a number per top-up, plan payment and paid payout, given once;
 * HTML and PDF for their own user only.
 */
const server = useTestServer({
  env: {
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
    PLATFORM_LEGAL_NAME: "Promptmint Test Ltd",
    PLATFORM_ADDRESS: "1 Ledger Lane, Receiptville",
    ADMIN_EMAILS: "receipts-operator@example.com",
  },
});
// An operator's address must be verified (decision 041): the sandbox's refunds and disputes.
const operator = useCaller(server, "Receipts operator", {
  email: "receipts-operator@example.com",
  verified: true,
});
const creator = useCaller(server, "Receipt Seller");
let slug = "";
let planId = "";

beforeAll(async () => {
  const app = await createPromptApp(
    creator,
    { name: "Receipt Poet", visibility: "public", price_cents: 7 },
    { model: "sandbox" },
  );
  expect(
    (await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } })).status,
  ).toBe(200);
  slug = app.slug;
  const plan = await creator.api("POST", `/api/app/${slug}/packages/`, {
    body: { name: "Monthly", price_cents: 300, description: "", features: {}, included_calls: 5 },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
});

const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

const receiptNumbers = async (userId: string) =>
  (
    await queryRows<{ number: string }>(
      server.database.db,
      sql`select number::text from receipts where user_id = ${userId}::uuid order by number`,
    )
  ).map((row) => row.number);

/** The text a PDF's pages draw (pdf-lib writes each string as hex in a Flate stream). */
function pdfStreamsText(pdf: Buffer): string {
  const raw = pdf.toString("latin1");
  let text = "";
  for (const match of raw.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    try {
      const inflated = inflateSync(Buffer.from(match[1] as string, "latin1")).toString("latin1");
      for (const hex of inflated.matchAll(/<([0-9A-Fa-f]+)>\s*Tj/g))
        text += `${Buffer.from(hex[1] as string, "hex").toString("latin1")}\n`;
    } catch {}
  }
  return text;
}

describe("receipts", () => {
  it("gives a top-up and a plan payment one number each, the same on every read, listed newest first", async () => {
    const consumer = await createCaller(server.baseUrl, "Rita Receipt");
    await fundWallet(consumer, 1000);
    const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: planId },
    });
    expect(subscribed.status).toBe(201);

    const first = await consumer.api("GET", "/api/receipts/");
    expect(first.status).toBe(200);
    expect(first.body.receipts).toHaveLength(2);
    const [plan, topUp] = first.body.receipts;
    expect(topUp).toMatchObject({
      kind: "top_up",
      amount_cents: 1000,
      currency: "USD",
      status: "paid",
      number: expect.stringMatching(/^PM-\d{6}$/),
    });
    expect(plan).toMatchObject({
      kind: "plan_payment",
      amount_cents: 300,
      status: "paid",
      description: expect.stringContaining("Monthly"),
    });
    // Numbered oldest first: the top-up came first.
    expect(Number(topUp.number.slice(3))).toBeLessThan(Number(plan.number.slice(3)));

    await fundWallet(consumer, 500);
    const again = await consumer.api("GET", "/api/receipts/");
    expect(again.body.receipts).toHaveLength(3);
    expect(again.body.receipts.slice(1)).toEqual(first.body.receipts);
    expect(again.body.receipts[0]).toMatchObject({ kind: "top_up", amount_cents: 500 });
  });

  it("numbers each fact once when reads race: one number per fact, none reused", async () => {
    const consumer = await createCaller(server.baseUrl, "Racing Reader");
    for (const cents of [200, 300, 400]) await fundWallet(consumer, cents);
    const answers = await Promise.all(Array.from({ length: 6 }, () => consumer.api("GET", "/api/receipts/")));
    for (const answer of answers) expect(answer.status).toBe(200);
    const lists = answers.map((answer) =>
      answer.body.receipts.map((r: { number: string; source_id: string }) => `${r.number}:${r.source_id}`),
    );
    for (const list of lists) expect(list).toEqual(lists[0]);
    const numbers = await receiptNumbers(await userIdOf(consumer));
    expect(numbers).toHaveLength(3);
    expect(new Set(numbers).size).toBe(3);
    // The numbers are unique across every user: the primary key.
    const [dupes] = await queryRows<{ n: number }>(
      server.database.db,
      sql`select count(*)::int - count(distinct (kind, source_id))::int as n from receipts`,
    );
    expect(dupes?.n).toBe(0);
  });

  it("answers 404 to anyone but the receipt's own user, and 400 to a malformed number", async () => {
    const owner = await createCaller(server.baseUrl, "Owner Olga");
    const other = await createCaller(server.baseUrl, "Other Otto");
    await fundWallet(owner, 250);
    const [receipt] = (await owner.api("GET", "/api/receipts/")).body.receipts;
    for (const format of ["html", "pdf"]) {
      expect((await owner.api("GET", `/api/receipts/${receipt.number}/${format}`)).status).toBe(200);
      const theirs = await other.api("GET", `/api/receipts/${receipt.number}/${format}`);
      expect(theirs.status).toBe(404);
      expect(theirs.body).toMatchObject({ code: "not_found", status: 404 });
      expect((await other.api("GET", `/api/receipts/PM-999999999/${format}`)).status).toBe(404);
      expect((await owner.api("GET", `/api/receipts/${receipt.number}/${format}`, { auth: "" })).status).toBe(
        401,
      );
    }
    expect((await other.api("GET", "/api/receipts/")).body.receipts).toEqual([]);
    const malformed = await owner.api("GET", "/api/receipts/12%3Cx/html");
    expect(malformed.status).toBe(400);
    expect(malformed.body.fields).toHaveProperty("number");
  });

  it("serves a PDF attachment that starts with %PDF and carries the number, amount and platform", async () => {
    const consumer = await createCaller(server.baseUrl, "Paula Pdf");
    await fundWallet(consumer, 1234);
    const [receipt] = (await consumer.api("GET", "/api/receipts/")).body.receipts;
    const response = await fetch(`${server.baseUrl}/api/receipts/${receipt.number}/pdf`, {
      headers: { authorization: `Bearer ${consumer.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="receipt-${receipt.number}.pdf"`,
    );
    const pdf = Buffer.from(await response.arrayBuffer());
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect((await PDFDocument.load(pdf)).getTitle()).toBe(`Receipt ${receipt.number}`);
    const text = pdfStreamsText(pdf);
    expect(text).toContain(`Receipt ${receipt.number}`);
    expect(text).toContain("12.34 USD");
    expect(text).toContain("Promptmint Test Ltd");
    expect(text).toContain("Paula Pdf");
  });

  it("names an organization's billing details on its receipts, in HTML and PDF, to a member who sees its money", async () => {
    const owner = await createCaller(server.baseUrl, "Org Receipt Owner");
    const billing = await createCaller(server.baseUrl, "Org Receipt Billing");
    const org = await insertOrganization(server.database.db, owner, "Acme Receipts");
    await setMember(server.database.db, org, billing, "billing");
    await server.database.db
      .update(organizations)
      .set({
        billingEmail: "ap@acme.test",
        billingAddress: "1 Acme Way\nSpringfield 12345",
        taxId: "EU123456789",
      })
      .where(eq(organizations.id, org));
    await fundWallet(actingFor(billing, org), 2500);
    const list = await actingFor(billing, org).api("GET", "/api/receipts/");
    expect(list.status).toBe(200);
    const [receipt] = list.body.receipts;
    expect(receipt).toMatchObject({ kind: "top_up", amount_cents: 2500 });
    // The member's own receipts are theirs: none.
    expect((await billing.api("GET", "/api/receipts/")).body.receipts).toEqual([]);
    const page = await actingFor(billing, org).api("GET", `/api/receipts/${receipt.number}/html`);
    expect(page.status).toBe(200);
    const html = page.body as string;
    expect(html).toContain("Acme Receipts &lt;ap@acme.test&gt;");
    expect(html).toContain('<th scope="row">Billing address</th><td>1 Acme Way, Springfield 12345</td>');
    expect(html).toContain('<th scope="row">Tax ID</th><td>EU123456789</td>');
    const pdf = await fetch(`${server.baseUrl}/api/receipts/${receipt.number}/pdf`, {
      headers: { authorization: `Bearer ${billing.token}`, "promptmint-organization": org },
    });
    expect(pdf.status).toBe(200);
    const text = pdfStreamsText(Buffer.from(await pdf.arrayBuffer()));
    expect(text).toContain("EU123456789");
    expect(text).toContain("1 Acme Way, Springfield 12345");
    // A person's receipt shows neither line.
    const person = await createCaller(server.baseUrl, "Plain Person");
    await fundWallet(person, 100);
    const [own] = (await person.api("GET", "/api/receipts/")).body.receipts;
    const plain = (await person.api("GET", `/api/receipts/${own.number}/html`)).body as string;
    expect(plain).not.toContain("Billing address");
    expect(plain).not.toContain("Tax ID");
  });

  it("escapes a hostile name in the HTML, which fetches nothing from outside", async () => {
    const hostile = `<script>alert("x")</script> & <img src=x onerror=1>`;
    const consumer = await createCaller(server.baseUrl, hostile);
    await fundWallet(consumer, 100);
    const [receipt] = (await consumer.api("GET", "/api/receipts/")).body.receipts;
    const page = await consumer.api("GET", `/api/receipts/${receipt.number}/html`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = page.body as string;
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=1&gt;",
    );
    expect(html).toContain(`Receipt ${receipt.number}`);
    expect(html).toContain("Promptmint Test Ltd");
    expect(html).toContain("1 Ledger Lane<br>Receiptville");
    expect(html).toContain("1.00 USD");
    expect(html).toContain(consumer.email);
    // No element loads anything: no src or href attribute, no stylesheet link, no url() in the CSS.
    expect(html).not.toMatch(/<[^>]*\s(src|href)=|<link|url\(/);
  });

  it("gives a paid payout a receipt naming the creator, and none before it is paid", async () => {
    const seller = await createCaller(server.baseUrl, "Payout Pat", { verified: true });
    const link = await seller.api("POST", "/api/payouts/onboarding");
    const onboarded = await fetch(link.body.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "bank=succeeds",
      redirect: "manual",
    });
    expect(onboarded.status).toBe(303);
    const sellerId = await userIdOf(seller);
    expect((await seller.api("GET", "/api/receipts/")).body.receipts).toEqual([]);
    await creditEarnings(server.database.db, sellerId, 2500 * MICROS_PER_CENT, daysAgo(40));
    const made = await seller.api("POST", "/api/payouts/", { body: {} });
    expect(made.status).toBe(201);
    expect(made.body.status).toBe("paid");
    const [receipt] = (await seller.api("GET", "/api/receipts/")).body.receipts;
    expect(receipt).toMatchObject({
      kind: "payout",
      source_id: made.body.id,
      amount_cents: 2500,
      status: "paid",
    });
    const html = (await seller.api("GET", `/api/receipts/${receipt.number}/html`)).body as string;
    expect(html).toContain("Paid to");
    expect(html).toContain("Payout Pat");
  });

  it("shows a refunded top-up as refunded and a disputed one as disputed, on the same numbers", async () => {
    const consumer = await createCaller(server.baseUrl, "Refunded Rick");
    await fundWallet(consumer, 800);
    await fundWallet(consumer, 600);
    const before = (await consumer.api("GET", "/api/receipts/")).body.receipts;
    const intents = await queryRows<{ external_id: string; amount_cents: number }>(
      server.database.db,
      sql`select p.external_id, p.amount_cents::int as amount_cents from payments p
          join users u on u.id = p.user_id where u.email = ${consumer.email} order by p.amount_cents desc`,
    );
    const refunded = await operator.api("POST", "/api/admin/sandbox/refunds", {
      body: { payment_intent_id: intents[0]?.external_id },
    });
    expect(refunded.status).toBe(200);
    const disputed = await operator.api("POST", "/api/admin/sandbox/disputes", {
      body: { payment_intent_id: intents[1]?.external_id, reason: "fraudulent" },
    });
    expect(disputed.status).toBe(200);
    const after = (await consumer.api("GET", "/api/receipts/")).body.receipts;
    expect(after.map((r: { number: string }) => r.number)).toEqual(
      before.map((r: { number: string }) => r.number),
    );
    expect(after.find((r: { amount_cents: number }) => r.amount_cents === 800)).toMatchObject({
      status: "refunded",
    });
    expect(after.find((r: { amount_cents: number }) => r.amount_cents === 600)).toMatchObject({
      status: "disputed",
    });
    const refundedReceipt = after.find((r: { amount_cents: number }) => r.amount_cents === 800);
    const html = (await consumer.api("GET", `/api/receipts/${refundedReceipt.number}/html`)).body as string;
    expect(html).toContain("This wallet top-up is refunded.");
  });
});
