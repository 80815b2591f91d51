import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, invocations, organizationAuditEvents, organizationMembers } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { actingFor, insertOrganization, setMember, userIdOf } from "../../test/organizations.ts";
import type { TestServer } from "../../test/server.ts";
import { PRICE, startKeyWorld } from "../keys/key-world.ts";
import { routeAccess } from "./access.ts";

// Acting for an organization (issue 43, decision 084): a member's token with the
// `Promptmint-Organization` header works on the organization's account, within their role; an
// organization's key works while its maker may call. On the real server and database.

let world: Awaited<ReturnType<typeof startKeyWorld>>;
let server: TestServer;
let owner: Caller;
let developer: Caller;
let billing: Caller;
let viewer: Caller;
let outsider: Caller;
let org: string;
let otherOrg: string;
const db = () => server.database.db;
const call = (key: string) =>
  owner.api("POST", `/api/app/${world.appA}/completion-messages`, {
    auth: key,
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });

beforeAll(async () => {
  world = await startKeyWorld();
  server = world.server;
  const person = (name: string) => createCaller(server.baseUrl, name);
  [owner, developer, billing, viewer, outsider] = [
    await person("Org Owner"),
    await person("Org Developer"),
    await person("Org Billing"),
    await person("Org Viewer"),
    await person("Outsider"),
  ];
  org = await insertOrganization(db(), owner, "Acme Labs");
  otherOrg = await insertOrganization(db(), outsider, "Other Co");
  await setMember(db(), org, developer, "developer");
  await setMember(db(), org, billing, "billing");
  await setMember(db(), org, viewer, "viewer");
});
afterAll(async () => {
  await world?.stop();
});

describe("a member's token with the organization header", () => {
  it("reads and writes the organization's account, not the person's", async () => {
    const balance = await fundWallet(actingFor(billing, org), 1_000);
    expect(balance).toBe(1_000 * 10_000);
    expect((await billing.api("GET", "/api/wallet/")).body.balance_micros).toBe(0);
    expect((await actingFor(owner, org).api("GET", "/api/wallet/")).body.balance_micros).toBe(1_000 * 10_000);
  });

  it("refuses what the role may not do with 403 organization_role naming the role", async () => {
    const wallet = await actingFor(developer, org).api("GET", "/api/wallet/");
    expect(wallet.status).toBe(403);
    expect(wallet.body).toMatchObject({ code: "organization_role" });
    expect(wallet.body.message).toBe(
      "Your role in Acme Labs is developer: a developer may not see the organization's money (wallet, receipts, payment methods, payouts). Ask an owner or admin of Acme Labs for a role that may.",
    );
    const key = await actingFor(viewer, org).api("POST", "/api/keys/", { body: { name: "nope" } });
    expect(key.status).toBe(403);
    expect(key.body.message).toContain("a viewer may not call apps or manage API keys");
    const app = await actingFor(billing, org).api("POST", "/api/app/", {
      body: { name: "Not mine to make", visibility: "public", price_cents: 10 },
    });
    expect(app.status).toBe(403);
    // Reading is every role's: the organization's (empty) app list.
    const apps = await actingFor(viewer, org).api("GET", "/api/app/");
    expect(apps.status).toBe(200);
  });

  it("answers 404 to a person who is not a member, and 400 naming a malformed header", async () => {
    const notMember = await actingFor(outsider, org).api("GET", "/api/app/");
    expect(notMember.status).toBe(404);
    expect(notMember.body.message).toBe("Organization not found");
    // A member of another organization is no member of this one.
    expect((await actingFor(outsider, otherOrg).api("GET", "/api/app/")).status).toBe(200);
    const malformed = await actingFor(developer, "acme").api("GET", "/api/app/");
    expect(malformed.status).toBe(400);
    expect(malformed.body.fields).toEqual({
      "promptmint-organization": "must be the id of an organization you are a member of",
    });
    // A person's account is not an organization, even their own.
    const personal = await actingFor(developer, await userIdOf(db(), developer)).api("GET", "/api/app/");
    expect(personal.status).toBe(404);
  });

  it("leaves the person's own routes alone (profile, memberships)", async () => {
    const profile = await actingFor(developer, org).api("GET", "/api/auth/profile/");
    expect(profile.status).toBe(200);
    expect(profile.body.email ?? profile.body.user?.email).toBe(developer.email);
  });

  it("writes every change a member makes for it in the audit log, with who did it", async () => {
    const made = await actingFor(developer, org).api("POST", "/api/keys/", { body: { name: "audited" } });
    expect(made.status).toBe(201);
    const events = await db()
      .select()
      .from(organizationAuditEvents)
      .where(
        and(
          eq(organizationAuditEvents.organizationId, org),
          eq(organizationAuditEvents.action, "POST /api/keys/"),
        ),
      );
    expect(events.map((event) => event.actorId)).toEqual([await userIdOf(db(), developer)]);
  });
});

describe("an organization's key", () => {
  it("charges the organization's wallet, records its maker, and works only while they may call", async () => {
    await fundWallet(actingFor(owner, org), 500);
    const made = await actingFor(developer, org).api("POST", "/api/keys/", { body: { name: "ci" } });
    expect(made.status).toBe(201);
    expect(made.body.made_by).toEqual({ user_id: await userIdOf(db(), developer), name: "Org Developer" });
    const before = (await settledWallet(actingFor(owner, org))).balance_micros;
    const answered = await call(made.body.key);
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const after = await settledWallet(actingFor(owner, org));
    expect(before - (after.balance_micros + after.held_micros)).toBe(PRICE * 10_000);
    expect((await settledWallet(developer)).balance_micros).toBe(0);
    const [recorded] = await db()
      .select({ caller: invocations.callerUserId, member: invocations.memberId })
      .from(invocations)
      .where(and(eq(invocations.apiKeyId, made.body.id), isNotNull(invocations.holdId)));
    expect(recorded?.caller).toBe(org);

    // Lowered to viewer: the key is refused (naming why) on the next call, raised again it works.
    await db()
      .update(organizationMembers)
      .set({ role: "viewer" })
      .where(eq(organizationMembers.userId, await userIdOf(db(), developer)));
    const lowered = await call(made.body.key);
    expect(lowered.status).toBe(403);
    expect(lowered.body.message).toContain("This key's maker is now viewer in Acme Labs");
    await db()
      .update(organizationMembers)
      .set({ role: "developer" })
      .where(eq(organizationMembers.userId, await userIdOf(db(), developer)));
    expect((await call(made.body.key)).status).toBe(200);

    // No longer a member: the key answers as an invalid one.
    await db()
      .delete(organizationMembers)
      .where(eq(organizationMembers.userId, await userIdOf(db(), developer)));
    const removed = await call(made.body.key);
    expect(removed.status).toBe(401);
    expect(await db().select().from(apiKeys).where(eq(apiKeys.id, made.body.id))).toHaveLength(1);
    await setMember(db(), org, developer, "developer");
  });

  it("is made by a member acting for it: a person's key stays the person's", async () => {
    const personal = await developer.api("POST", "/api/keys/", { body: { name: "mine" } });
    expect(personal.status).toBe(201);
    expect(personal.body.made_by).toBeNull();
    const listed = await actingFor(developer, org).api("GET", "/api/keys/");
    expect(listed.body.map((key: { id: string }) => key.id)).not.toContain(personal.body.id);
  });
});

describe("what each route needs of a member (access.ts)", () => {
  it("names a rule for every documented route: no write falls through to manage, money needs a money role", async () => {
    const document = (await owner.api("GET", "/api/openapi.json")).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const access: Record<string, string> = {};
    for (const [path, operations] of Object.entries(document.paths))
      for (const method of Object.keys(operations))
        access[`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, "{$1}")}`] = routeAccess(
          method.toUpperCase(),
          path,
        );
    expect(Object.keys(access).length).toBeGreaterThan(150);
    // A write no rule names would need an owner or admin: each such route is a decision to make.
    expect(Object.entries(access).filter(([, needs]) => needs === "manage")).toEqual([]);
    const money = Object.entries(access).filter(([route]) =>
      /\/(wallet|receipts|payouts|payment-methods|subscriptions|payment-intent)/.test(route),
    );
    expect(money.length).toBeGreaterThan(15);
    for (const [route, needs] of money)
      expect([route, needs]).toEqual([route, expect.stringMatching(/^(read_billing|billing)$/)]);
    expect(access["POST /api/keys/"]).toBe("call");
    expect(access["POST /api/app/{slug}/chat-messages"]).toBe("call");
    expect(access["PATCH /api/app/{slug}/prompt/"]).toBe("build");
    expect(access["GET /api/analytics/dashboard/"]).toBe("read");
    expect(access["GET /api/auth/profile/"]).toBe("personal");
  });
});
