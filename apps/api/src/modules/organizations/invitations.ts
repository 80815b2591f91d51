import { createHash, randomBytes } from "node:crypto";
import {
  type CreateInvitation,
  type Invitation,
  type InvitationPreview,
  isUuid,
  ORGANIZATION_ROLE_TEXT,
  type OrganizationRole,
} from "@promptmint/contracts";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client.ts";
import { organizationInvitations, organizationMembers, organizations, users } from "../../db/schema/index.ts";
import { addressKey } from "../../lib/email-address.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { escapeHtml } from "../../lib/html.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { Mailer } from "../../lib/mailer.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { recordAuditEvent } from "./audit.ts";
import { nameOf, ownersOnly } from "./member-access.ts";
import type { Membership } from "./membership.ts";

/**
 * Invitations to an organization (decision 084): mailed to an address with a link whose token is
 * 32 random bytes, kept as its SHA-256 only. One invitation is pending per address (inviting it
 * again replaces it); it works for 7 days, once, and only for the person signed in with that
 * address.
 */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

export interface InvitationDeps {
  db: Database;
  /** Undefined when the server sends no mail (an external issuer): invitations cannot be delivered. */
  mailer: Mailer | undefined;
  publicUrl: string;
}

type InvitationRow = typeof organizationInvitations.$inferSelect;
const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");
const inviter = alias(users, "inviter");

function statusOf(row: InvitationRow): Invitation["status"] {
  if (row.acceptedAt) return "accepted";
  if (row.revokedAt) return "revoked";
  return row.expiresAt.getTime() <= Date.now() ? "expired" : "pending";
}

/** The inviter as people read them: their name, else their username; null once they are gone. */
const inviterName = (row: { name: string | null; username: string | null }) =>
  row.name || row.username || null;

export async function listInvitations(db: Database, organizationId: string): Promise<Invitation[]> {
  const rows = await db
    .select({ invitation: organizationInvitations, name: inviter.displayName, username: inviter.username })
    .from(organizationInvitations)
    .leftJoin(inviter, eq(inviter.id, organizationInvitations.invitedBy))
    .where(eq(organizationInvitations.organizationId, organizationId))
    .orderBy(desc(organizationInvitations.createdAt), desc(organizationInvitations.id))
    .limit(200);
  return rows.map(({ invitation, ...by }) => toInvitation(invitation, inviterName(by)));
}

function toInvitation(row: InvitationRow, invitedBy: string | null): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role as OrganizationRole,
    invited_by: invitedBy,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    status: statusOf(row),
  };
}

/**
 * Invites an address (capability manage, checked by the route; an owner only for the owner role)
 * and mails it the link. A pending invitation of the same address is revoked first: its link
 * stops working. The organization's row is locked meanwhile, so two invitations of one address at
 * once end with one pending.
 */
export async function createInvitation(
  deps: InvitationDeps,
  actor: { membership: Membership; person: LocalUser },
  input: CreateInvitation,
): Promise<Invitation> {
  const { db, mailer } = deps;
  const { membership, person } = actor;
  const { organizationId } = membership;
  if (input.role === "owner" && membership.role !== "owner") throw ownersOnly(membership, "invite an owner");
  if (!mailer)
    throw new AppError(
      "unavailable",
      "This server sends no mail (no SMTP_URL with its sign-in issuer), so invitations cannot be delivered",
    );
  const email = addressKey(input.email);
  const token = randomBytes(32).toString("base64url");
  const row = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await t.execute(
      sql`select id from ${organizations} where ${organizations.id} = ${organizationId} for update`,
    );
    const [member] = await t
      .select({ userId: organizationMembers.userId })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(and(eq(organizationMembers.organizationId, organizationId), eq(users.email, email)))
      .limit(1);
    if (member)
      throw new AppError("conflict", `${email} is already a member of ${nameOf(membership)}`, {
        fields: { email: "is already a member" },
      });
    const replaced = await t
      .update(organizationInvitations)
      .set({ revokedAt: new Date() })
      .where(and(eq(organizationInvitations.organizationId, organizationId), pendingFor(email)))
      .returning({ id: organizationInvitations.id });
    const [created] = await t
      .insert(organizationInvitations)
      .values({
        organizationId,
        email,
        role: input.role,
        tokenHash: sha256(token),
        invitedBy: person.id,
        expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
      })
      .returning();
    if (!created) throw new AppError("internal_error", "The invitation was not stored");
    await recordAuditEvent(t, {
      organizationId,
      actorId: person.id,
      action: "invitation.created",
      target: email,
      details: { role: input.role, ...(replaced.length > 0 ? { replaced: replaced.map((r) => r.id) } : {}) },
    });
    return created;
  });
  await mailInvitation(deps, { membership, person, row, token }).catch(() => {
    throw new AppError(
      "upstream_failed",
      `The invitation of ${email} is saved, but the mail server refused it: invite the address again to resend it`,
    );
  });
  return toInvitation(row, person.displayName || person.username);
}

const pendingFor = (email: string) =>
  and(
    sql`lower(${organizationInvitations.email}) = lower(${email})`,
    isNull(organizationInvitations.acceptedAt),
    isNull(organizationInvitations.revokedAt),
  );

async function mailInvitation(
  deps: InvitationDeps,
  invitation: { membership: Membership; person: LocalUser; row: InvitationRow; token: string },
) {
  const { membership, person, row, token } = invitation;
  const organization = nameOf(membership);
  const from = person.displayName || person.username;
  const url = `${deps.publicUrl}/invitations/${token}`;
  const role = row.role as OrganizationRole;
  const lead = `${from} (${person.email}) invited you to join ${organization} on Promptmint as ${role}: ${ORGANIZATION_ROLE_TEXT[role].toLowerCase()}. Sign in as ${row.email} and open this link to accept:`;
  const foot = `The invitation works once, until ${row.expiresAt.toUTCString()}. If you did not expect it, ignore this message: nothing happens unless you accept.`;
  await deps.mailer?.send({
    to: row.email,
    subject: `${from} invited you to ${organization} on Promptmint`,
    text: `Hello,\n\n${lead}\n\n${url}\n\n${foot}\n`,
    html: `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#111">
<p>Hello,</p>
<p>${escapeHtml(lead)}</p>
<p><a href="${escapeHtml(url)}">Accept the invitation</a></p>
<p style="color:#555">${escapeHtml(foot)}</p>
</body></html>`,
    links: [{ label: "Accept the invitation", url }],
  });
}

/** Revokes a pending invitation (capability manage): its link stops working. */
export async function revokeInvitation(
  db: Database,
  actor: { membership: Membership; person: LocalUser },
  invitationId: string,
): Promise<void> {
  const { organizationId } = actor.membership;
  const [existing] = isUuid(invitationId)
    ? await db
        .select()
        .from(organizationInvitations)
        .where(
          and(
            eq(organizationInvitations.id, invitationId),
            eq(organizationInvitations.organizationId, organizationId),
          ),
        )
        .limit(1)
    : [];
  if (!existing) throw notFound("Invitation");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [revoked] = await t
      .update(organizationInvitations)
      .set({ revokedAt: new Date() })
      .where(
        and(
          eq(organizationInvitations.id, existing.id),
          isNull(organizationInvitations.acceptedAt),
          isNull(organizationInvitations.revokedAt),
        ),
      )
      .returning();
    if (!revoked) throw new AppError("conflict", `This invitation was already ${statusOf(existing)}`);
    await recordAuditEvent(t, {
      organizationId,
      actorId: actor.person.id,
      action: "invitation.revoked",
      target: existing.email,
      details: { role: existing.role },
    });
  });
}

/** The invitation a link's token names, with its organization's and inviter's names. */
async function invitationByToken(db: Database, token: string) {
  if (!/^[\w-]{20,100}$/.test(token)) throw notFound("Invitation");
  const [found] = await db
    .select({
      invitation: organizationInvitations,
      organizationName: users.displayName,
      name: inviter.displayName,
      username: inviter.username,
    })
    .from(organizationInvitations)
    .innerJoin(users, eq(users.id, organizationInvitations.organizationId))
    .leftJoin(inviter, eq(inviter.id, organizationInvitations.invitedBy))
    .where(eq(organizationInvitations.tokenHash, sha256(token)))
    .limit(1);
  if (!found) throw notFound("Invitation");
  return found;
}

/** What the link offers, for whoever holds it and is signed in; only the invited address may accept. */
export async function previewInvitation(
  db: Database,
  token: string,
  person: LocalUser,
): Promise<InvitationPreview> {
  const found = await invitationByToken(db, token);
  const { invitation } = found;
  return {
    organization_id: invitation.organizationId,
    organization_name: found.organizationName,
    email: invitation.email,
    role: invitation.role as OrganizationRole,
    invited_by: inviterName(found),
    expires_at: invitation.expiresAt.toISOString(),
    status: statusOf(invitation),
    email_matches: addressKey(person.email) === addressKey(invitation.email),
  };
}

/**
 * Makes the person a member with the invitation's role, once: the invitation is marked accepted by
 * a conditional update, which a second accept at the same moment waits for and then finds done, in
 * the transaction that inserts the member. Answers the organization's id.
 */
export async function acceptInvitation(db: Database, token: string, person: LocalUser): Promise<string> {
  const found = await invitationByToken(db, token);
  const { invitation } = found;
  if (addressKey(person.email) !== addressKey(invitation.email))
    throw new AppError(
      "invitation_email_mismatch",
      `This invitation is for ${invitation.email}, and you are signed in as ${person.email}: sign in as ${invitation.email} to accept it`,
    );
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [accepted] = await t
      .update(organizationInvitations)
      .set({ acceptedAt: new Date(), acceptedBy: person.id })
      .where(
        and(
          eq(organizationInvitations.id, invitation.id),
          isNull(organizationInvitations.acceptedAt),
          isNull(organizationInvitations.revokedAt),
          sql`${organizationInvitations.expiresAt} > now()`,
        ),
      )
      .returning();
    if (!accepted) throw await unusable(t, invitation.id, found.organizationName);
    const [joined] = await t
      .insert(organizationMembers)
      .values({
        organizationId: invitation.organizationId,
        userId: person.id,
        role: accepted.role,
        addedBy: accepted.invitedBy,
      })
      .onConflictDoNothing()
      .returning();
    if (!joined) throw new AppError("conflict", `You are already a member of ${found.organizationName}`);
    await recordAuditEvent(t, {
      organizationId: invitation.organizationId,
      actorId: person.id,
      action: "member.joined",
      target: person.email,
      details: { role: accepted.role, invitation_id: accepted.id },
    });
  });
  forgetLookups(db, "memberships");
  return invitation.organizationId;
}

/** Why an invitation cannot be accepted now, read again after the update found it used. */
async function unusable(db: Database, id: string, organizationName: string): Promise<AppError> {
  const [row] = await db.select().from(organizationInvitations).where(eq(organizationInvitations.id, id));
  if (row?.acceptedAt)
    return new AppError(
      "conflict",
      `This invitation to ${organizationName} was already accepted on ${row.acceptedAt.toISOString()}`,
    );
  if (row?.revokedAt)
    return new AppError(
      "conflict",
      `This invitation to ${organizationName} was revoked on ${row.revokedAt.toISOString()}: ask for a new one`,
    );
  if (row)
    return new AppError(
      "invitation_expired",
      `This invitation to ${organizationName} expired on ${row.expiresAt.toISOString()}: ask for a new one`,
    );
  return notFound("Invitation");
}
