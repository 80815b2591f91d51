import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, callerAt, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { readOutbox } from "../../test/mail.ts";
import { actingFor, userIdOf } from "../../test/organizations.ts";
import { freePort, startTestServer, type TestServer } from "../../test/server.ts";

// Access follows membership at once (issue 43, decision 084): two API processes on one PostgreSQL.
// A member removed, or a role lowered, through one process is refused by the other on its very next
// request, with a key or with their token, including an MCP session opened before (its next paid
// step is a new request, authenticated again).

const PRICE = 20;
let testDb: TestDatabase;
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let servers: TestServer[];
let owner: Caller;
let member: Caller;
let org: string;
let slug: string;

const at = (index: number, person: Caller) => callerAt(servers[index]?.baseUrl as string, person);

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  const env = { OPENAI_API_KEY: "sk-vendor", OPENAI_BASE_URL: vendor.baseUrl };
  const first = await startTestServer(testDb, { env });
  const second = await startTestServer(testDb, {
    port: await freePort(),
    env: { ...env, PUBLIC_URL: first.baseUrl },
  });
  servers = [first, second];
  const creator = await createCaller(first.baseUrl, "Seller Two");
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Org Target", visibility: "public", price_cents: PRICE },
  });
  slug = app.slug;
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  owner = await createCaller(first.baseUrl, "Org Owner");
  member = await createCaller(first.baseUrl, "Org Member");
  const created = await owner.api("POST", "/api/organizations/", { body: { name: "Two Process Co" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  org = created.body.id;
  await fundWallet(actingFor(owner, org), 1_000);
});
afterAll(async () => {
  for (const server of servers ?? []) await server.stop();
  await vendor?.stop();
  await testDb?.destroy();
});

/** Adds the member with a role through the real invitation (the mailed link's token from the outbox). */
async function join(role: string): Promise<void> {
  const invitations = async () =>
    (await readOutbox(servers[0]?.baseUrl as string)).filter(
      (mail) => mail.to === member.email.toLowerCase() && /invited you to/.test(mail.subject),
    );
  const before = (await invitations()).length;
  const invited = await owner.api("POST", `/api/organizations/${org}/invitations/`, {
    body: { email: member.email, role },
  });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  let link: string | undefined;
  await eventually(async () => {
    const mails = await invitations();
    link = mails.length > before ? mails[0]?.links[0]?.url : undefined;
    return link !== undefined;
  });
  const token = link?.split("/invitations/")[1];
  const accepted = await member.api("POST", `/api/invitations/${token}/accept/`);
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
}

const complete = (caller: Caller, auth?: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    ...(auth ? { auth } : {}),
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });

async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

describe("two processes", () => {
  it("a member removed through one process: their key and their token stop working on both at once", async () => {
    await join("developer");
    const made = await actingFor(at(1, member), org).api("POST", "/api/keys/", { body: { name: "ci" } });
    expect(made.status).toBe(201);
    // Both processes have the key and the membership cached.
    for (const index of [0, 1]) {
      expect((await complete(at(index, member), made.body.key)).status).toBe(200);
      expect((await complete(actingFor(at(index, member), org))).status).toBe(200);
    }
    const memberId = await userIdOf(servers[0]?.database.db as never, member);
    const removed = await owner.api("DELETE", `/api/organizations/${org}/members/${memberId}/`);
    expect(removed.status).toBeLessThan(300);
    // On the process that removed them at once; on the other within moments (the change feed).
    expect((await complete(at(0, member), made.body.key)).status).toBe(401);
    const keyMs = await eventually(async () => (await complete(at(1, member), made.body.key)).status === 401);
    const tokenMs = await eventually(
      async () => (await complete(actingFor(at(1, member), org))).status === 404,
    );
    expect(keyMs).toBeLessThan(5_000);
    expect(tokenMs).toBeLessThan(5_000);
  });

  it("a role lowered through one process: the member's key is refused on the other, naming why", async () => {
    await join("developer");
    const memberId = await userIdOf(servers[0]?.database.db as never, member);
    const made = await actingFor(member, org).api("POST", "/api/keys/", { body: { name: "lowered" } });
    expect((await complete(at(1, member), made.body.key)).status).toBe(200);
    const lowered = await owner.api("PATCH", `/api/organizations/${org}/members/${memberId}/`, {
      body: { role: "viewer" },
    });
    expect(lowered.status).toBe(200);
    await eventually(async () => (await complete(at(1, member), made.body.key)).status === 403);
    const refused = await complete(at(1, member), made.body.key);
    expect(refused.body).toMatchObject({ code: "organization_role" });
    expect(refused.body.message).toContain("This key's maker is now viewer in Two Process Co");
    expect((await owner.api("DELETE", `/api/organizations/${org}/members/${memberId}/`)).status).toBe(204);
  });

  it("an MCP session opened before the removal: its next paid tool call is refused, on the other process", async () => {
    await join("developer");
    const memberId = await userIdOf(servers[0]?.database.db as never, member);
    const made = await actingFor(member, org).api("POST", "/api/keys/", { body: { name: "agent" } });
    const client = new Client({ name: "org-agent", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${servers[1]?.baseUrl}/api/app/${slug}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${made.body.key}` } },
      }),
    );
    const first = await client.callTool({ name: slug, arguments: { query: "hi" } });
    expect(first.isError).toBeFalsy();
    expect((await owner.api("DELETE", `/api/organizations/${org}/members/${memberId}/`)).status).toBeLessThan(
      300,
    );
    const refused = await eventually(async () => {
      try {
        const next = await client.callTool({ name: slug, arguments: { query: "again" } });
        return next.isError === true;
      } catch (error) {
        return /401|invalid or has been revoked/i.test(String(error));
      }
    });
    expect(refused).toBeLessThan(5_000);
    await client.close().catch(() => {});
  });
});
