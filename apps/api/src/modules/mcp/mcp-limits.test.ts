import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

/**
 * Every MCP call counts (decision 043): a JSON-RPC batch is refused whole, whatever it holds; MCP
 * requests of any kind are limited per address and per caller; the servers alive at once are
 * bounded. Each test speaks from its own address (X-Forwarded-For from loopback, a trusted proxy).
 */
const PAID_PER_MINUTE = 5;
const MCP_PER_MINUTE = 16;
const MCP_PER_IP_PER_MINUTE = 30;
const OPEN_PER_KEY = 3;

let slug: string;
let appId: string;

const { server, vendor } = useVendorServer({
  GATEWAY_RATE_LIMIT_PER_MINUTE: String(PAID_PER_MINUTE),
  MCP_RATE_LIMIT_PER_MINUTE: String(MCP_PER_MINUTE),
  MCP_RATE_LIMIT_PER_IP_PER_MINUTE: String(MCP_PER_IP_PER_MINUTE),
  MCP_MAX_OPEN_PER_KEY: String(OPEN_PER_KEY),
});
const creator = useCaller(server, "MCP Limits Seller");
const consumer = useCaller(server, "MCP Limits Buyer");

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Counted Tool", interaction_mode: "completion", visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
  const [row] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  appId = row?.id ?? "";
  await fundWallet(consumer, 500);
});

const newKey = async () => (await consumer.api("POST", "/api/keys/", { body: { name: "mcp" } })).body.key;

let lastAddress = 0;
/** A client address of its own (X-Forwarded-For, trusted from loopback). */
const newAddress = () => {
  lastAddress += 1;
  return `198.51.100.${lastAddress}`;
};

const toolCall = (id: number | string | undefined, topic = "rain") => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  method: "tools/call",
  params: { name: slug, arguments: { query: `a haiku about ${topic}` } },
});

async function post(
  body: unknown,
  options: { key?: string; address: string; path?: string; headers?: Record<string, string> },
) {
  const response = await fetch(`${server.baseUrl}${options.path ?? `/api/app/${slug}/mcp`}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-forwarded-for": options.address,
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

/** The app's invocations and what they were charged, as the database recorded them. */
async function recorded() {
  const rows = await server.database.db
    .select({ status: invocations.status, chargedCents: invocations.chargedCents })
    .from(invocations)
    .where(and(eq(invocations.applicationId, appId)));
  return {
    calls: rows.length,
    chargedCents: rows.reduce((sum, row) => sum + row.chargedCents, 0),
  };
}

async function openServers(): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const found = /^mcp_open_servers (\d+)$/m.exec(text);
  if (!found) throw new Error("mcp_open_servers is not in /metrics");
  return Number(found[1]);
}

const expectBatchRefused = (answer: Awaited<ReturnType<typeof post>>) => {
  expect(answer.status).toBe(400);
  expect(answer.json).toMatchObject({
    jsonrpc: "2.0",
    id: null,
    error: { code: -32600, data: { code: "batch_not_supported" } },
  });
  expect(answer.json.error.message).toContain("JSON-RPC batches are not supported");
  expect(answer.json.error.message).toContain("2025-06-18");
};

describe("MCP: every call counts", () => {
  it("refuses a batch of tools/call by name on every protocol version; the key's limit then lets exactly its calls through", async () => {
    const key = await newKey();
    const address = newAddress();
    const before = await recorded();
    const vendorCalls = vendor.requests.length;
    const batch = Array.from({ length: 10 }, (_, i) => toolCall(i + 1));
    for (const version of [undefined, "2025-11-25", "2025-06-18", "2025-03-26"]) {
      const answer = await post(batch, {
        key,
        address,
        headers: version ? { "mcp-protocol-version": version } : {},
      });
      expectBatchRefused(answer);
      expect(answer.json.error.data.protocol_version).toBe(version ?? null);
    }
    // A batch opening with initialize (the version in its params), one of a single call, one of notifications.
    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "old", version: "1" } },
    };
    expectBatchRefused(await post([initialize, toolCall(1)], { key, address }));
    expectBatchRefused(await post([toolCall(1)], { key, address }));
    expectBatchRefused(await post([toolCall(undefined), toolCall(undefined)], { key, address }));
    expectBatchRefused(await post([toolCall(1)], { key, address, path: "/api/mcp" }));
    expect(await recorded()).toEqual(before);
    expect(vendor.requests.length).toBe(vendorCalls);

    // Nothing above spent the key's paid calls: one call per POST, exactly the limit answered and charged.
    const answers = [];
    for (let i = 0; i < PAID_PER_MINUTE + 2; i += 1)
      answers.push(await post(toolCall(1, `call ${i}`), { key, address: newAddress() }));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(PAID_PER_MINUTE).fill(200), 429, 429]);
    for (const answer of answers.slice(0, PAID_PER_MINUTE))
      expect(answer.json.result._meta["promptmint/charge"].charged_cents).toBe(10);
    expect(answers[PAID_PER_MINUTE]?.json.message).toContain(`${PAID_PER_MINUTE} calls per minute`);
    expect(answers[PAID_PER_MINUTE]?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await recorded()).toEqual({
      calls: before.calls + PAID_PER_MINUTE,
      chargedCents: before.chargedCents + 10 * PAID_PER_MINUTE,
    });
    expect(vendor.requests.length).toBe(vendorCalls + PAID_PER_MINUTE);
  });

  it("refuses a batch with a repeated id whole: nothing runs, nothing is charged", async () => {
    const key = await newKey();
    const before = await recorded();
    const vendorCalls = vendor.requests.length;
    const answer = await post([toolCall(7), toolCall(7), toolCall(7), toolCall(7), toolCall(undefined)], {
      key,
      address: newAddress(),
      headers: { "mcp-protocol-version": "2025-03-26" },
    });
    expectBatchRefused(answer);
    expect(await recorded()).toEqual(before);
    expect(vendor.requests.length).toBe(vendorCalls);
  });

  it("limits initialize and tools/list per key and per address (429 naming the limit), and keeps no server alive", async () => {
    const [first, second] = [await newKey(), await newKey()];
    const address = newAddress();
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "flood", version: "1" },
      },
    };
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const statuses: number[] = [];
    let refusal: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < MCP_PER_MINUTE + 3; i += 1) {
      const answer = await post(i % 2 ? list : initialize, { key: first, address });
      statuses.push(answer.status);
      if (answer.status === 429) refusal ??= answer;
    }
    expect(statuses).toEqual([...Array(MCP_PER_MINUTE).fill(200), 429, 429, 429]);
    expect(refusal?.json.message).toContain(`${MCP_PER_MINUTE} MCP requests per minute`);
    expect(refusal?.headers.get("retry-after")).toMatch(/^\d+$/);

    // Another key from the same address: the address's limit, counted before authentication.
    const more: number[] = [];
    for (let i = 0; i < MCP_PER_IP_PER_MINUTE; i += 1)
      more.push((await post(list, { key: second, address })).status);
    const allowed = MCP_PER_IP_PER_MINUTE - (MCP_PER_MINUTE + 3);
    expect(more).toEqual([...Array(allowed).fill(200), ...Array(MCP_PER_IP_PER_MINUTE - allowed).fill(429)]);
    const anonymous = await post(initialize, { address });
    expect(anonymous.status).toBe(429);
    expect(anonymous.json.message).toContain(
      `${MCP_PER_IP_PER_MINUTE} MCP requests per minute from one address`,
    );
    // Another address is not affected.
    expect((await post(list, { key: second, address: newAddress() })).status).toBe(200);
    // No server outlives its request.
    expect(await openServers()).toBe(0);
  });

  it("bounds the MCP servers a key keeps alive at once, and frees them as their calls end", async () => {
    const key = await newKey();
    vendor.set({ kind: "echo", delayMs: 1500 });
    try {
      const calls = Array.from({ length: OPEN_PER_KEY + 2 }, (_, i) =>
        post(toolCall(1, `slow ${i}`), { key, address: newAddress() }),
      );
      await expect.poll(openServers, { timeout: 20_000 }).toBe(OPEN_PER_KEY);
      const answers = await Promise.all(calls);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(OPEN_PER_KEY);
      expect(refused).toHaveLength(2);
      expect(refused[0]?.json.message).toContain(`at most ${OPEN_PER_KEY} MCP requests`);
      expect(refused[0]?.headers.get("retry-after")).toBe("1");
      expect(await openServers()).toBe(0);
    } finally {
      vendor.set({ kind: "echo" });
    }
  });
});
