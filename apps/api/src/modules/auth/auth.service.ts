import type { Creator, Profile, ProfileUpdate, Roles, User } from "@promptmint/contracts";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { creators, users } from "../../db/schema/index.ts";
import { addressKey } from "../../lib/email-address.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { isOperator } from "../admin/operators.ts";
import type { VerifiedToken } from "./token-verifier.ts";

export type LocalUser = typeof users.$inferSelect;
type CreatorRow = typeof creators.$inferSelect;

export async function findUserByToken(db: Database, token: VerifiedToken): Promise<LocalUser | undefined> {
  const [user] = await db
    .select()
    .from(users)
    .where(and(eq(users.issuer, token.issuer), eq(users.subject, token.subject)))
    .limit(1);
  return user;
}

/**
 * The issuer's `email_verified` claim, from any issuer: only `true` (or "true", as some issuers
 * send it) counts; absent or anything else is unverified.
 */
export function claimsVerifiedEmail(claims: { email_verified?: unknown }): boolean {
  return claims.email_verified === true || claims.email_verified === "true";
}

/**
 * Finds the user a verified token belongs to, creating it from the token's claims on first
 * sight. `creator` also gives the user a creator record; `refreshEmail` takes the issuer's
 * current email and its `email_verified` (the issuer owns both; the profile form cannot change
 * them). An address once verified stays verified while it stays the user's address, so an older
 * token issued before the verification cannot undo it.
 */
export async function upsertUserFromToken(
  db: Database,
  token: VerifiedToken,
  options: { creator: boolean; refreshEmail: boolean },
): Promise<LocalUser> {
  const claims = token.claims;
  const email = typeof claims.email === "string" ? addressKey(claims.email) : "";
  const emailVerified = Boolean(email) && claimsVerifiedEmail(claims);
  let user = await findUserByToken(db, token);

  if (!user) {
    const displayName = typeof claims.name === "string" ? claims.name.trim().slice(0, 150) : "";
    const base = usernameBase(claims.preferred_username, email, token.subject);
    for (let attempt = 0; attempt < 5 && !user; attempt++) {
      const username =
        attempt === 0 ? base : `${base.slice(0, 140)}${Math.floor(Math.random() * 9000 + 1000)}`;
      [user] = await db
        .insert(users)
        .values({
          issuer: token.issuer,
          subject: token.subject,
          email,
          username,
          displayName,
          emailVerified,
          ...namePartsOf(claims, displayName),
        })
        .onConflictDoNothing()
        .returning();
      if (!user) {
        // Either the username was taken or a concurrent request created this user: look again.
        user = await findUserByToken(db, token);
      }
    }
    if (!user) throw new AppError("conflict", "Could not create a unique username; try again");
  } else if (options.refreshEmail && email && email !== user.email) {
    [user] = await db
      .update(users)
      .set({ email, emailVerified, updatedAt: new Date() })
      .where(eq(users.id, user.id))
      .returning();
  } else if (emailVerified && !user.emailVerified && email === user.email) {
    user = await markEmailVerified(db, user);
  }
  if (!user) throw new AppError("internal_error", "User vanished during sign-in");

  if (options.creator) {
    await db
      .insert(creators)
      .values({ userId: user.id, displayName: user.displayName })
      .onConflictDoNothing({ target: creators.userId });
  }
  return user;
}

/** Records that the user's current address is verified (the issuer said so, or its link was opened). */
export async function markEmailVerified(db: Database, user: LocalUser): Promise<LocalUser> {
  const [row] = await db
    .update(users)
    .set({ emailVerified: true, updatedAt: new Date() })
    .where(and(eq(users.id, user.id), eq(users.email, user.email)))
    .returning();
  return row ?? user;
}

/**
 * The profile's first and last name: the issuer's given_name and family_name, or else, from an
 * issuer whose sign-up asks for one name (the embedded one does), that name split at its first
 * space, so a profile made at sign-up is not left without them. The person can correct both.
 */
export function namePartsOf(
  claims: { given_name?: unknown; family_name?: unknown },
  displayName: string,
): { firstName: string; lastName: string } {
  const given = typeof claims.given_name === "string" ? claims.given_name.trim() : "";
  const family = typeof claims.family_name === "string" ? claims.family_name.trim() : "";
  if (given || family) return { firstName: given.slice(0, 150), lastName: family.slice(0, 150) };
  const [first = "", ...rest] = displayName.split(/\s+/).filter(Boolean);
  return { firstName: first.slice(0, 150), lastName: rest.join(" ").slice(0, 150) };
}

function usernameBase(preferred: unknown, email: string, subject: string): string {
  const source =
    typeof preferred === "string" && preferred && !preferred.includes("@") ? preferred : email.split("@")[0];
  const cleaned = (source ?? "").replace(/[^\w.+-]+/g, "").slice(0, 150);
  return cleaned || `user-${subject.replace(/\W+/g, "").slice(0, 12)}`;
}

export function toUser(row: LocalUser): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    first_name: row.firstName,
    last_name: row.lastName,
    display_name: row.displayName,
    is_active: row.isActive,
    date_joined: row.dateJoined.toISOString(),
    email_verified: row.emailVerified,
  };
}

function toCreator(row: CreatorRow): Creator {
  return { id: row.id, display_name: row.displayName, plan: row.plan, credits: row.credits };
}

async function findCreator(db: Database, userId: string): Promise<CreatorRow | undefined> {
  const [row] = await db.select().from(creators).where(eq(creators.userId, userId)).limit(1);
  return row;
}

export async function getProfile(db: Database, user: LocalUser): Promise<Profile> {
  const creator = await findCreator(db, user.id);
  return { user: toUser(user), creator: creator ? toCreator(creator) : null };
}

/**
 * Applies the profile form. The form echoes read-only fields (id, email, is_active, date_joined,
 * plan, credits); echoing them unchanged is fine, changing them is refused with a 400 naming them.
 */
export async function updateProfile(db: Database, user: LocalUser, update: ProfileUpdate): Promise<Profile> {
  const current = await getProfile(db, user);
  const refused: Record<string, string> = {};
  const readOnlyUser = {
    id: current.user.id,
    email: current.user.email,
    is_active: current.user.is_active,
    date_joined: current.user.date_joined,
    email_verified: current.user.email_verified,
  };
  for (const [field, value] of Object.entries(readOnlyUser)) {
    const sent = update.user[field as keyof typeof readOnlyUser];
    if (sent === undefined) continue;
    const same =
      field === "email"
        ? addressKey(String(sent)) === value
        : field === "date_joined"
          ? sameInstant(String(sent), String(value))
          : sent === value;
    if (!same) refused[`user.${field}`] = field === "email" ? "cannot be changed" : "is read-only";
  }
  if (update.creator) {
    if (!current.creator) refused.creator = "you have no creator profile";
    else {
      const readOnlyCreator = {
        id: current.creator.id,
        plan: current.creator.plan,
        credits: current.creator.credits,
      };
      for (const [field, value] of Object.entries(readOnlyCreator)) {
        const sent = update.creator[field as keyof typeof readOnlyCreator];
        if (sent !== undefined && sent !== value) refused[`creator.${field}`] = "is read-only";
      }
    }
  }
  if (Object.keys(refused).length > 0) throw invalidFields(refused);

  const { username, first_name, last_name, display_name } = update.user;
  const changes = {
    ...(username !== undefined ? { username } : {}),
    ...(first_name !== undefined ? { firstName: first_name } : {}),
    ...(last_name !== undefined ? { lastName: last_name } : {}),
    ...(display_name !== undefined ? { displayName: display_name } : {}),
  };

  return db.transaction(async (tx) => {
    let updated = user;
    if (Object.keys(changes).length > 0) {
      if (username !== undefined && username.toLowerCase() !== user.username.toLowerCase()) {
        const [taken] = await tx
          .select({ id: users.id })
          .from(users)
          .where(sql`lower(${users.username}) = ${username.toLowerCase()}`)
          .limit(1);
        if (taken)
          throw new AppError("conflict", "That username is already taken", {
            fields: { "user.username": "is already taken" },
          });
      }
      const [row] = await tx
        .update(users)
        .set({ ...changes, updatedAt: new Date() })
        .where(eq(users.id, user.id))
        .returning();
      if (row) updated = row;
    }
    if (update.creator?.display_name !== undefined) {
      await tx
        .update(creators)
        .set({ displayName: update.creator.display_name })
        .where(eq(creators.userId, user.id));
    }
    return getProfile(tx as unknown as Database, updated);
  });
}

function sameInstant(a: string, b: string): boolean {
  const ta = Date.parse(a);
  return !Number.isNaN(ta) && ta === Date.parse(b);
}

export async function getRoles(db: Database, user: LocalUser): Promise<Roles> {
  const creator = await findCreator(db, user.id);
  const roles: Roles["roles"] = creator ? ["user", "creator"] : ["user"];
  if (await isOperator(db, user)) roles.push("operator");
  return { roles, is_creator: Boolean(creator) };
}

export async function listCreators(db: Database): Promise<{ id: string; display_name: string }[]> {
  const rows = await db
    .select({
      id: creators.id,
      displayName: creators.displayName,
      userDisplayName: users.displayName,
      username: users.username,
    })
    .from(creators)
    .innerJoin(users, eq(users.id, creators.userId))
    .where(eq(users.isActive, true))
    .orderBy(asc(creators.createdAt))
    .limit(500);
  return rows.map((row) => ({
    id: row.id,
    display_name: row.displayName || row.userDisplayName || row.username,
  }));
}

export async function getOwnCreator(db: Database, user: LocalUser): Promise<Creator> {
  const creator = await findCreator(db, user.id);
  if (!creator) throw notFound("Creator profile");
  return toCreator(creator);
}
