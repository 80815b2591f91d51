import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { USAGE_CSV_COLUMNS } from "./usage-export.ts";

/**
 * The consumer's spend export (docs/decisions/069): one row per call charged to their wallet in
 * the date range, filtered by key and app, streamed, with no cell a spreadsheet would run.
 */
const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" } });
const creator = useCaller(server, "Export Seller");
const apps: Array<{ slug: string; id: string }> = [];
let planId = "";

beforeAll(async () => {
  for (const [name, price] of [
    ["=HYPERLINK(1)", 5],
    ["Plain Sonnet", 8],
  ] as const) {
    const app = await createPromptApp(
      creator,
      { name, visibility: "public", price_cents: price },
      { model: "sandbox" },
    );
    expect(
      (await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } }))
        .status,
    ).toBe(200);
    apps.push(app);
  }
  const plan = await creator.api("POST", `/api/app/${apps[1]?.slug}/packages/`, {
    body: { name: "Covered", price_cents: 100, description: "", features: {}, included_calls: 3 },
  });
  planId = plan.body.id;
});

const today = () => new Date().toISOString().slice(0, 10);
const dayOffset = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const call = (caller: Caller, slug: string, auth?: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: { query: "hi" } },
    ...(auth ? { auth } : {}),
  });

/** The export as the server sends it: status, headers and the rows split into cells (no quoted commas here). */
async function exportCsv(caller: Caller, query: string) {
  const response = await fetch(`${server.baseUrl}/api/usage/export.csv?${query}`, {
    headers: { authorization: `Bearer ${caller.token}` },
  });
  const text = await response.text();
  const lines = text.split("\r\n").filter(Boolean);
  return { response, text, header: lines[0], rows: lines.slice(1).map((line) => line.split(",")) };
}

const column = (name: (typeof USAGE_CSV_COLUMNS)[number]) => USAGE_CSV_COLUMNS.indexOf(name);
const total = (rows: string[][]) =>
  rows.reduce((sum, row) => sum + Math.round(Number(row[column("price_charged")]) * 100), 0);

describe("the usage export (CSV)", () => {
  const consumer = {} as Caller;
  const keys: Array<{ id: string; key: string }> = [];
  const [a, b] = [0, 1];

  beforeAll(async () => {
    Object.assign(consumer, await createCaller(server.baseUrl, "Export Buyer"));
    await fundWallet(consumer, 1000);
    for (const name of ["=cmd|' /C calc'!A0", "backend"]) {
      const created = await consumer.api("POST", "/api/keys/", { body: { name } });
      expect(created.status).toBe(201);
      keys.push({ id: created.body.id, key: created.body.key });
    }
    const slugA = apps[a]?.slug as string;
    const slugB = apps[b]?.slug as string;
    for (let i = 0; i < 3; i++) expect((await call(consumer, slugA, keys[0]?.key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call(consumer, slugB, keys[1]?.key)).status).toBe(200);
    expect((await call(consumer, slugA)).status).toBe(200);
    // Covered by a plan: no charge, so not a row.
    expect(
      (await consumer.api("POST", `/api/app/${slugB}/subscriptions/`, { body: { package_id: planId } }))
        .status,
    ).toBe(201);
    for (let i = 0; i < 2; i++) expect((await call(consumer, slugB, keys[1]?.key)).status).toBe(200);
  });

  it("has one row per charged call in the range, with the prices the calls were charged", async () => {
    const { response, header, rows } = await exportCsv(consumer, `from=${today()}&to=${today()}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="usage-${today()}-to-${today()}.csv"`,
    );
    expect(header).toBe(USAGE_CSV_COLUMNS.join(","));
    expect(rows).toHaveLength(6);
    expect(total(rows)).toBe(3 * 5 + 2 * 8 + 5);
    // The same figures as the invocations the database charged.
    const [charged] = await queryRows<{ calls: number; cents: number }>(
      server.database.db,
      sql`select count(*)::int as calls, sum(charged_cents)::int as cents from invocations i
          join users u on u.id = i.caller_user_id
          where u.email = ${consumer.email} and i.hold_id is not null and i.charged_cents > 0`,
    );
    expect(charged).toEqual({ calls: rows.length, cents: total(rows) });
    for (const row of rows) {
      expect(row).toHaveLength(USAGE_CSV_COLUMNS.length);
      expect(row[column("currency")]).toBe("USD");
      expect(row[column("status")]).toBe("success");
      expect(row[column("mode")]).toBe("completion");
    }
    const times = rows.map((row) => row[column("time_utc")] as string);
    expect([...times].sort()).toEqual(times);
    // A spreadsheet reads the app's and the key's names as text, not as formulas.
    const first = rows.find((row) => row[column("api_key_name")]?.includes("cmd")) as string[];
    expect(first[column("app_name")]).toBe("'=HYPERLINK(1)");
    expect(first[column("api_key_name")]).toBe("'=cmd|' /C calc'!A0");
    expect(rows.filter((row) => row[column("api_key_name")] === "").length).toBe(1);
  });

  it("filters by key and by app, and both", async () => {
    const byKey = await exportCsv(consumer, `from=${today()}&to=${today()}&key=${keys[1]?.id}`);
    expect(byKey.rows).toHaveLength(2);
    expect(total(byKey.rows)).toBe(16);
    expect(new Set(byKey.rows.map((row) => row[column("api_key_name")]))).toEqual(new Set(["backend"]));
    const byApp = await exportCsv(consumer, `from=${today()}&to=${today()}&app=${apps[a]?.slug}`);
    expect(byApp.rows).toHaveLength(4);
    expect(new Set(byApp.rows.map((row) => row[column("app_slug")]))).toEqual(new Set([apps[a]?.slug]));
    const both = await exportCsv(
      consumer,
      `from=${today()}&to=${today()}&app=${apps[a]?.slug}&key=${keys[1]?.id}`,
    );
    expect(both.response.status).toBe(200);
    expect(both.rows).toHaveLength(0);
  });

  it("takes whole UTC days, both included: a range before or after today has no rows", async () => {
    expect((await exportCsv(consumer, `from=${dayOffset(-3)}&to=${today()}`)).rows).toHaveLength(6);
    expect((await exportCsv(consumer, `from=${dayOffset(-3)}&to=${dayOffset(-1)}`)).rows).toHaveLength(0);
    expect((await exportCsv(consumer, `from=${dayOffset(1)}&to=${dayOffset(2)}`)).rows).toHaveLength(0);
  });

  it("shows nobody another's calls, nor lets them name another's key", async () => {
    const other = await createCaller(server.baseUrl, "Export Stranger");
    const theirs = await exportCsv(other, `from=${today()}&to=${today()}`);
    expect(theirs.response.status).toBe(200);
    expect(theirs.rows).toHaveLength(0);
    const key = await exportCsv(other, `from=${today()}&to=${today()}&key=${keys[0]?.id}`);
    expect(key.response.status).toBe(404);
    expect(JSON.parse(key.text)).toMatchObject({ code: "not_found", status: 404 });
    const unsigned = await fetch(`${server.baseUrl}/api/usage/export.csv?from=${today()}&to=${today()}`);
    expect(unsigned.status).toBe(401);
  });

  it("refuses bad dates and ranges with a 400 naming the field", async () => {
    const cases: Array<[string, string]> = [
      [`to=${today()}`, "from"],
      [`from=${today()}`, "to"],
      [`from=2026-13-01&to=${today()}`, "from"],
      [`from=yesterday&to=${today()}`, "from"],
      [`from=${today()}&to=1999-01-01`, "to"],
      [`from=${today()}&to=${dayOffset(-1)}`, "to"],
      [`from=${today()}&to=${today()}&key=not-a-key`, "key"],
    ];
    for (const [query, field] of cases) {
      const answer = await exportCsv(consumer, query);
      expect(answer.response.status, query).toBe(400);
      const body = JSON.parse(answer.text);
      expect(body).toMatchObject({ code: "bad_request", status: 400 });
      expect(Object.keys(body.fields), query).toEqual([field]);
    }
    const unknownApp = await exportCsv(consumer, `from=${today()}&to=${today()}&app=no-such-app`);
    expect(unknownApp.response.status).toBe(404);
  });

  it("streams every row of a range larger than one page, each once", async () => {
    const bulk = await createCaller(server.baseUrl, "Bulk Buyer");
    const [user] = await queryRows<{ id: string }>(
      server.database.db,
      sql`select id from users where email = ${bulk.email}`,
    );
    await queryRows(
      server.database.db,
      sql`insert into invocations (application_id, caller_user_id, mode, status, latency_ms, charged_cents, hold_id)
          select ${apps[b]?.id}::uuid, ${user?.id}::uuid, 'completion', 'success', 10, 1 + (n % 3), gen_random_uuid()
          from generate_series(1, 2503) n`,
    );
    const { rows } = await exportCsv(bulk, `from=${today()}&to=${today()}`);
    expect(rows).toHaveLength(2503);
    expect(new Set(rows.map((row) => row[column("call_id")])).size).toBe(2503);
    const expected = Array.from({ length: 2503 }, (_, i) => 1 + ((i + 1) % 3)).reduce((s, c) => s + c, 0);
    expect(total(rows)).toBe(expected);
  });
});
