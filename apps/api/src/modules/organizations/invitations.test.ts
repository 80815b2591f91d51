import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizationInvitations, organizationMembers } from "../../db/schema/index.ts";
import { type Caller, callerAt, createCaller } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { readOutbox, waitForOutboxMessage } from "../../test/mail.ts";
import { startTestServers, type TestServer } from "../../test/server.ts";

/**
 * Invitations (decision 084): the link is mailed (the development outbox keeps it), works once,
 * for 7 days, only for the person signed in with the invited address; a second invitation of an
 * address replaces the first. On PostgreSQL two accepts race through two server processes.
 */

let testDb: TestDatabase;
let servers: TestServer[];
let urls: string[];
let owner: Caller;
let organization: { id: string; name: string };

const db = () => servers[0]?.database.db as NonNullable<TestServer["database"]>["db"];
const baseUrl = () => urls[0] as string;
const invitations = () => `/api/organizations/${organization.id}/invitations/`;

beforeAll(async () => {
  testDb = await createTestDatabase();
  ({ servers, urls } = await startTestServers(testDb));
  owner = await createCaller(baseUrl(), "Olive Owner");
  const created = await owner.api("POST", "/api/organizations/", { body: { name: "Acme" } });
  organization = created.body;
});
afterAll(async () => {
  for (const server of servers ?? []) await server.stop();
  await testDb?.destroy();
});

async function invite(email: string, role = "developer") {
  const invited = await owner.api("POST", invitations(), { body: { email, role } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  return invited.body as { id: string; email: string; status: string };
}

/** The token of the newest invitation mailed to `email`, from the link in the outbox. */
async function mailedToken(email: string, after = 0): Promise<string> {
  for (let tries = 0; tries < 100; tries++) {
    const messages = (await readOutbox(baseUrl())).filter(
      (m) => m.to === email.toLowerCase() && /invited you to/.test(m.subject),
    );
    if (messages.length > after) return messages[0]?.links[0]?.url.split("/invitations/")[1] ?? "";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no invitation mailed to ${email}`);
}

describe("inviting and accepting", () => {
  it("mails the link, which only the invited address accepts, once", async () => {
    const invitee = await createCaller(baseUrl(), "Ivy Invitee");
    const wrong = await createCaller(baseUrl(), "Walt Wrong");
    const invitation = await invite(invitee.email.toUpperCase(), "billing");
    expect(invitation).toMatchObject({ email: invitee.email.toLowerCase(), status: "pending" });

    const mail = await waitForOutboxMessage(baseUrl(), invitee.email, /invited you to/);
    expect(mail.subject).toBe("Olive Owner invited you to Acme on Promptmint");
    expect(mail.links).toEqual([
      { label: "Accept the invitation", url: expect.stringMatching(/\/invitations\/[\w-]{43}$/) },
    ]);
    expect(mail.links[0]?.url.startsWith(`${servers[0]?.config.publicUrl}/invitations/`)).toBe(true);
    expect(mail.text).toContain("as billing");
    const token = await mailedToken(invitee.email);
    const stored = await db()
      .select()
      .from(organizationInvitations)
      .where(eq(organizationInvitations.id, invitation.id));
    expect(stored[0]?.tokenHash).not.toContain(token);
    expect(stored[0]?.tokenHash).toMatch(/^[0-9a-f]{64}$/);

    const preview = await wrong.api("GET", `/api/invitations/${token}/`);
    expect(preview.body).toMatchObject({
      organization_id: organization.id,
      organization_name: "Acme",
      role: "billing",
      invited_by: "Olive Owner",
      status: "pending",
      email_matches: false,
    });
    const refused = await wrong.api("POST", `/api/invitations/${token}/accept/`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("invitation_email_mismatch");
    expect(refused.body.message).toContain(invitee.email.toLowerCase());

    expect((await invitee.api("GET", `/api/invitations/${token}/`)).body.email_matches).toBe(true);
    const accepted = await invitee.api("POST", `/api/invitations/${token}/accept/`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: organization.id, role: "billing", member_count: 2 });
    const again = await invitee.api("POST", `/api/invitations/${token}/accept/`);
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("already accepted");
    expect((await invitee.api("GET", `/api/invitations/${token}/`)).body.status).toBe("accepted");
    expect((await invitee.api("GET", "/api/organizations/")).body).toEqual([
      expect.objectContaining({ id: organization.id, role: "billing" }),
    ]);
    const already = await owner.api("POST", invitations(), {
      body: { email: invitee.email, role: "viewer" },
    });
    expect(already.status).toBe(409);
    expect(already.body.message).toBe(`${invitee.email.toLowerCase()} is already a member of Acme`);

    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data.slice(0, 2)).toMatchObject([
      { action: "member.joined", target: invitee.email.toLowerCase(), details: { role: "billing" } },
      { action: "invitation.created", target: invitee.email.toLowerCase(), actor: { name: "Olive Owner" } },
    ]);
  });

  it("answers 404 for a token no invitation has", async () => {
    for (const token of ["nope", "A".repeat(43)]) {
      expect((await owner.api("GET", `/api/invitations/${token}/`)).status).toBe(404);
      expect((await owner.api("POST", `/api/invitations/${token}/accept/`)).status).toBe(404);
    }
  });

  it("replaces a pending invitation of the same address: the first link stops working", async () => {
    const email = `twice-${Date.now()}@example.test`;
    const first = await invite(email, "viewer");
    const firstToken = await mailedToken(email);
    const second = await invite(email, "developer");
    const secondToken = await mailedToken(email, 1);
    expect(secondToken).not.toBe(firstToken);
    const listed = (await owner.api("GET", invitations())).body as { id: string; status: string }[];
    expect(listed.find((i) => i.id === first.id)?.status).toBe("revoked");
    expect(listed.find((i) => i.id === second.id)?.status).toBe("pending");
    const person = await createCaller(baseUrl(), "Tess Twice", { email });
    const stale = await person.api("POST", `/api/invitations/${firstToken}/accept/`);
    expect(stale.status).toBe(409);
    expect(stale.body.message).toContain("revoked");
    expect((await person.api("POST", `/api/invitations/${secondToken}/accept/`)).body.role).toBe("developer");
  });

  it("refuses an expired link with 410 naming when, and a revoked one with 409", async () => {
    const email = `late-${Date.now()}@example.test`;
    const invitation = await invite(email);
    const token = await mailedToken(email);
    const person = await createCaller(baseUrl(), "Lou Late", { email });
    const past = new Date(Date.now() - 60_000);
    await db()
      .update(organizationInvitations)
      .set({ expiresAt: past })
      .where(eq(organizationInvitations.id, invitation.id));
    const expired = await person.api("POST", `/api/invitations/${token}/accept/`);
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ code: "invitation_expired" });
    expect(expired.body.message).toContain(past.toISOString());

    const other = `revoked-${Date.now()}@example.test`;
    const revokedOne = await invite(other);
    const revokedToken = await mailedToken(other);
    expect((await owner.api("DELETE", `${invitations()}${revokedOne.id}/`)).status).toBe(204);
    expect((await owner.api("DELETE", `${invitations()}${revokedOne.id}/`)).status).toBe(409);
    expect((await owner.api("DELETE", `${invitations()}${organization.id}/`)).status).toBe(404);
    expect((await owner.api("DELETE", `${invitations()}not-an-id/`)).body.fields).toHaveProperty(
      "invitation_id",
    );
    const revokedPerson = await createCaller(baseUrl(), "Rae Revoked", { email: other });
    expect((await revokedPerson.api("POST", `/api/invitations/${revokedToken}/accept/`)).status).toBe(409);
    const audit = await owner.api("GET", `/api/organizations/${organization.id}/audit/`);
    expect(audit.body.data[0]).toMatchObject({ action: "invitation.revoked", target: other });
  });

  it("lets only owners invite an owner, managers invite, and names bad fields", async () => {
    const admin = await createCaller(baseUrl(), "Ada Admin");
    await invite(admin.email, "admin");
    await admin.api("POST", `/api/invitations/${await mailedToken(admin.email)}/accept/`);
    const ownerInvite = await admin.api("POST", invitations(), {
      body: { email: "x@example.test", role: "owner" },
    });
    expect(ownerInvite.status).toBe(403);
    expect(ownerInvite.body.message).toContain("only an owner may invite an owner");
    expect(
      (await admin.api("POST", invitations(), { body: { email: "y@example.test", role: "viewer" } })).status,
    ).toBe(201);
    const bad = await owner.api("POST", invitations(), { body: { email: "nope", role: "emperor" } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.fields).sort()).toEqual(["email", "role"]);
    const stranger = await createCaller(baseUrl(), "Sam Stranger");
    expect((await stranger.api("GET", invitations())).status).toBe(404);
    expect(
      (await stranger.api("POST", invitations(), { body: { email: "z@example.test", role: "viewer" } }))
        .status,
    ).toBe(404);
  });
});

describe("two accepts of one invitation at once", () => {
  it("make one member and one 200, on every server", async () => {
    const email = `race-${Date.now()}@example.test`;
    await invite(email, "viewer");
    const token = await mailedToken(email);
    const person = await createCaller(baseUrl(), "Rita Race", { email });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        callerAt(urls[i % urls.length] as string, person).api("POST", `/api/invitations/${token}/accept/`),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const personId = (await person.api("GET", "/api/auth/profile/")).body.user.id;
    const rows = await db()
      .select()
      .from(organizationMembers)
      .where(
        and(
          eq(organizationMembers.organizationId, organization.id),
          eq(organizationMembers.userId, personId),
        ),
      );
    expect(rows).toHaveLength(1);
  });
});
