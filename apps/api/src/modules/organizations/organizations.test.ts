import { createHash, randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, creators, memberSpend, organizationMembers, users } from "../../db/schema/index.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { waitForOutboxMessage } from "../../test/mail.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { MAX_OWNED_ORGANIZATIONS } from "./organizations.service.ts";

/**
 * Organizations (decision 084) through the real API: an organization is an account made in one
 * transaction; its members' roles decide what they may change; the last owner stays; removing a
 * member revokes the keys they made for it; every change is in the audit log.
 */

let testDb: TestDatabase;
let server: TestServer;
let owner: Caller;
let stranger: Caller;
let ownerId: string;

const db = () => server.database.db;
const idOf = async (caller: Caller) => (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
  owner = await createCaller(server.baseUrl, "Olive Owner");
  stranger = await createCaller(server.baseUrl, "Stan Stranger");
  ownerId = await idOf(owner);
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

async function createOrganization(caller: Caller, name: string, extra: Record<string, unknown> = {}) {
  const created = await caller.api("POST", "/api/organizations/", { body: { name, ...extra } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; slug: string; name: string };
}

/** A new person joined to the organization with `role`, through the mailed invitation. */
async function join(organizationId: string, role: string, name: string) {
  const person = await createCaller(server.baseUrl, name);
  const invited = await owner.api("POST", `/api/organizations/${organizationId}/invitations/`, {
    body: { email: person.email, role },
  });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const mail = await waitForOutboxMessage(server.baseUrl, person.email, /invited you to/);
  const token = mail.links[0]?.url.split("/invitations/")[1] ?? "";
  expect((await person.api("POST", `/api/invitations/${token}/accept/`)).status).toBe(200);
  return { caller: person, id: await idOf(person) };
}

describe("creating an organization", () => {
  it("makes its account, creator record, billing details and first owner in one go", async () => {
    const organization = await createOrganization(owner, "Acme Labs, Inc.", {
      billing_email: "Billing@Acme.test",
      tax_id: "GB123",
    });
    expect(organization).toMatchObject({
      name: "Acme Labs, Inc.",
      slug: "acme-labs-inc",
      billing_email: "billing@acme.test",
      tax_id: "GB123",
      billing_address: "",
      role: "owner",
      member_count: 1,
    });
    const [account] = await db().select().from(users).where(eq(users.id, organization.id));
    expect(account).toMatchObject({
      kind: "organization",
      issuer: "promptmint:organization",
      username: "acme-labs-inc",
      displayName: "Acme Labs, Inc.",
      email: "billing@acme.test",
    });
    expect(await db().select().from(creators).where(eq(creators.userId, organization.id))).toHaveLength(1);
    const listed = await owner.api("GET", "/api/organizations/");
    expect(listed.body.map((o: { id: string }) => o.id)).toContain(organization.id);
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data[0]).toMatchObject({
      action: "organization.created",
      actor: { user_id: ownerId, name: "Olive Owner", email: owner.email },
    });
  });

  it("gives a second organization of the same name its own slug, and the creator's address", async () => {
    const first = await createOrganization(stranger, "Twin Co");
    const second = await createOrganization(stranger, "Twin Co");
    expect(first.slug).toBe("twin-co");
    expect(second.slug).toMatch(/^twin-co-\d{4}$/);
    const [account] = await db().select().from(users).where(eq(users.id, second.id));
    expect(account?.email).toBe(stranger.email.toLowerCase());
  });

  it("names each bad field, and refuses fields it does not know", async () => {
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: "A" }, "name"],
      [{ name: "Fine", billing_email: "not-an-address" }, "billing_email"],
      [{ name: "Fine", tax_id: "x".repeat(41) }, "tax_id"],
    ];
    for (const [body, field] of cases) {
      const refused = await owner.api("POST", "/api/organizations/", { body });
      expect(refused.status).toBe(400);
      expect(Object.keys(refused.body.fields ?? {})).toContain(field);
    }
    const planted = await owner.api("POST", "/api/organizations/", {
      body: { name: "Fine", created_by: "x" },
    });
    expect(planted.status).toBe(400);
  });

  it(`lets one person own at most ${MAX_OWNED_ORGANIZATIONS}`, async () => {
    const busy = await createCaller(server.baseUrl, "Busy Founder");
    const made = await Promise.all(
      Array.from({ length: MAX_OWNED_ORGANIZATIONS + 3 }, (_, i) =>
        busy.api("POST", "/api/organizations/", { body: { name: `Venture ${i}` } }),
      ),
    );
    expect(made.filter((answer) => answer.status === 201)).toHaveLength(MAX_OWNED_ORGANIZATIONS);
    const refused = made.filter((answer) => answer.status === 409);
    expect(refused).toHaveLength(3);
    expect(refused[0]?.body.message).toContain(`You own ${MAX_OWNED_ORGANIZATIONS} organizations`);
  });
});

describe("who sees and changes an organization", () => {
  it("answers 404 to anyone not a member and for an unknown id; a malformed id is a 400 naming it", async () => {
    const organization = await createOrganization(owner, "Hidden");
    for (const url of [
      `/api/organizations/${organization.id}/`,
      `/api/organizations/${organization.id}/members/`,
      `/api/organizations/${organization.id}/audit/`,
      "/api/organizations/00000000-0000-4000-8000-000000000000/members/",
    ]) {
      const answer = await stranger.api("GET", url);
      expect(answer.status, url).toBe(404);
      expect(answer.body.message).toBe("Organization not found");
    }
    const patched = await stranger.api("PATCH", `/api/organizations/${organization.id}/`, {
      body: { name: "Mine now" },
    });
    expect(patched.status).toBe(404);
    expect((await owner.api("GET", `/api/organizations/${organization.id}/`)).body.name).toBe("Hidden");
    const malformed = await stranger.api("GET", "/api/organizations/not-a-uuid/");
    expect(malformed.status).toBe(400);
    expect(malformed.body.fields).toEqual({ id: "must be a UUID (8-4-4-4-12 hex digits)" });
  });

  it("lets a manager rename it (the account's name too), and refuses a developer by role", async () => {
    const organization = await createOrganization(owner, "Acme");
    const renamed = await owner.api("PATCH", `/api/organizations/${organization.id}/`, {
      body: { name: "Acme Two", billing_address: "1 Row\nLondon" },
    });
    expect(renamed.body).toMatchObject({ name: "Acme Two", billing_address: "1 Row\nLondon" });
    const [account] = await db().select().from(users).where(eq(users.id, organization.id));
    expect(account?.displayName).toBe("Acme Two");
    const developer = await join(organization.id, "developer", "Dev Eloper");
    const refused = await developer.caller.api("PATCH", `/api/organizations/${organization.id}/`, {
      body: { name: "Dev Corp" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: "organization_role",
      message:
        "Your role in Acme Two is developer: it may not manage members and settings; ask an owner or admin",
    });
    expect((await developer.caller.api("GET", `/api/organizations/${organization.id}/`)).body).toMatchObject({
      name: "Acme Two",
      role: "developer",
      member_count: 2,
    });
    expect((await developer.caller.api("GET", `/api/organizations/${organization.id}/audit/`)).status).toBe(
      403,
    );
    const empty = await owner.api("PATCH", `/api/organizations/${organization.id}/`, { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain("must name at least one of");
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual([
      "member.joined",
      "invitation.created",
      "organization.updated",
      "organization.created",
    ]);
    expect(audit.body.data[2].details.name).toEqual({ from: "Acme", to: "Acme Two" });
  });
});

describe("members' roles and budgets", () => {
  it("keeps an owner: only owners give or take the role, and the last one cannot lose it", async () => {
    const organization = await createOrganization(owner, "Owners Club");
    const members = `/api/organizations/${organization.id}/members`;
    const admin = await join(organization.id, "admin", "Ann Admin");
    const viewer = await join(organization.id, "viewer", "Vic Viewer");

    const byAdmin = await admin.caller.api("PATCH", `${members}/${viewer.id}/`, { body: { role: "owner" } });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.message).toContain("only an owner may give or take the owner role");
    const demoteOwner = await admin.caller.api("PATCH", `${members}/${ownerId}/`, {
      body: { role: "viewer" },
    });
    expect(demoteOwner.status).toBe(403);
    const lastOwner = await owner.api("PATCH", `${members}/${ownerId}/`, { body: { role: "admin" } });
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.message).toContain("has no other owner");

    const promoted = await admin.caller.api("PATCH", `${members}/${viewer.id}/`, {
      body: { role: "developer" },
    });
    expect(promoted.body).toMatchObject({ user_id: viewer.id, role: "developer" });
    expect((await owner.api("PATCH", `${members}/${admin.id}/`, { body: { role: "owner" } })).status).toBe(
      200,
    );
    // Two owners now: either may step down, but not both at once.
    const both = await Promise.all([
      owner.api("PATCH", `${members}/${ownerId}/`, { body: { role: "admin" } }),
      admin.caller.api("PATCH", `${members}/${admin.id}/`, { body: { role: "admin" } }),
    ]);
    expect(both.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const owners = await db()
      .select()
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, organization.id), eq(organizationMembers.role, "owner")),
      );
    expect(owners).toHaveLength(1);

    const audit = await (both[0].status === 200 ? admin.caller : owner).api(
      "GET",
      `/api/organizations/${organization.id}/audit/`,
    );
    const changes = audit.body.data.filter((e: { action: string }) => e.action === "member.role_changed");
    expect(changes.map((e: { details: unknown }) => e.details)).toContainEqual({
      from: "viewer",
      to: "developer",
    });
    expect(changes).toHaveLength(3);
  });

  it("lets a billing member set budgets, not roles; a developer neither", async () => {
    const organization = await createOrganization(owner, "Budgeted");
    const members = `/api/organizations/${organization.id}/members`;
    const billing = await join(organization.id, "billing", "Bill Ing");
    const developer = await join(organization.id, "developer", "Dee Veloper");
    const budget = await billing.caller.api("PATCH", `${members}/${developer.id}/`, {
      body: { monthly_budget_cents: 5_000 },
    });
    expect(budget.body).toMatchObject({ monthly_budget_cents: 5_000, spent_this_month_micros: 0 });
    const role = await billing.caller.api("PATCH", `${members}/${developer.id}/`, {
      body: { role: "admin" },
    });
    expect(role.body.code).toBe("organization_role");
    const own = await developer.caller.api("PATCH", `${members}/${developer.id}/`, {
      body: { monthly_budget_cents: null },
    });
    expect(own.status).toBe(403);
    expect(own.body.message).toContain("ask an owner, admin or billing member");
    const bad = await owner.api("PATCH", `${members}/${developer.id}/`, {
      body: { monthly_budget_cents: -1 },
    });
    expect(bad.body.fields).toEqual({ monthly_budget_cents: "must be at least 0" });
    const notMember = await owner.api("PATCH", `${members}/${organization.id}/`, {
      body: { role: "viewer" },
    });
    expect(notMember.body.message).toBe("Member not found");
    // This UTC month's spend row counts; last month's does not.
    const now = new Date();
    const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    await db()
      .insert(memberSpend)
      .values([
        {
          organizationId: organization.id,
          userId: developer.id,
          periodStart: thisMonth,
          spentMicros: 1_250_000,
        },
        {
          organizationId: organization.id,
          userId: developer.id,
          periodStart: lastMonth,
          spentMicros: 9_000_000,
        },
      ]);
    const listed = await developer.caller.api("GET", `${members}/`);
    expect(listed.body.find((m: { user_id: string }) => m.user_id === developer.id)).toMatchObject({
      name: "Dee Veloper",
      role: "developer",
      monthly_budget_cents: 5_000,
      spent_this_month_micros: 1_250_000,
    });
    expect(
      listed.body.find((m: { user_id: string }) => m.user_id === billing.id).spent_this_month_micros,
    ).toBe(0);
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data[0]).toMatchObject({
      action: "member.budget_changed",
      target: developer.caller.email.toLowerCase(),
      details: { from: null, to: 5_000 },
      actor: { name: "Bill Ing" },
    });
  });
});

describe("removing and leaving", () => {
  const makeKey = async (organizationId: string, createdBy: string, name: string) => {
    const [key] = await db()
      .insert(apiKeys)
      .values({
        userId: organizationId,
        name,
        prefix: "pm_test",
        keyHash: createHash("sha256").update(randomBytes(16)).digest("hex"),
        createdBy,
      })
      .returning();
    return key?.id as string;
  };
  const revokedAt = async (id: string) =>
    (await db().select().from(apiKeys).where(eq(apiKeys.id, id)))[0]?.revokedAt ?? null;

  it("revokes the keys the removed member made for the organization, and only those", async () => {
    const organization = await createOrganization(owner, "Keyed");
    const developer = await join(organization.id, "developer", "Kay Maker");
    const theirs = await makeKey(organization.id, developer.id, "theirs");
    const owners = await makeKey(organization.id, ownerId, "owner's");
    const url = `/api/organizations/${organization.id}/members/${developer.id}/`;
    const byDeveloper = await developer.caller.api(
      "DELETE",
      `/api/organizations/${organization.id}/members/${ownerId}/`,
    );
    expect(byDeveloper.status).toBe(403);
    expect((await owner.api("DELETE", url)).status).toBe(204);
    expect(await revokedAt(theirs)).not.toBeNull();
    expect(await revokedAt(owners)).toBeNull();
    expect((await developer.caller.api("GET", `/api/organizations/${organization.id}/`)).status).toBe(404);
    expect((await owner.api("DELETE", url)).status).toBe(404);
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data[0]).toMatchObject({
      action: "member.removed",
      details: { role: "developer", keys_revoked: 1 },
    });
  });

  it("lets a member leave, but never the last owner", async () => {
    const organization = await createOrganization(owner, "Leavers");
    const viewer = await join(organization.id, "viewer", "Lee Ver");
    const key = await makeKey(organization.id, viewer.id, "old");
    expect(
      (await viewer.caller.api("DELETE", `/api/organizations/${organization.id}/members/${viewer.id}/`))
        .status,
    ).toBe(204);
    expect(await revokedAt(key)).not.toBeNull();
    const last = await owner.api("DELETE", `/api/organizations/${organization.id}/members/${ownerId}/`);
    expect(last.status).toBe(409);
    expect(last.body.message).toContain("last owner cannot leave");
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/?page=1`);
    expect(audit.body).toMatchObject({ page: 1, page_size: 50, has_more: false });
    expect(audit.body.data[0]).toMatchObject({ action: "member.left", actor: { name: "Lee Ver" } });
    expect(
      (await owner.api("GET", `/api/organizations/${organization.id}/audit/?page=0`)).body.fields,
    ).toHaveProperty("page");
  });
});
