import { createHash, randomBytes } from "node:crypto";
import { hash } from "@node-rs/argon2";
import { and, count, eq, gt, isNull, max, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { identityAccounts, identityTokens, signInFailures } from "../db/schema/index.ts";
import { escapeHtml } from "../lib/html.ts";
import type { Mailer } from "../lib/mailer.ts";
import { ARGON2, describeWeakPassword, type IdentityAccount, normalizeEmail, signIn } from "./accounts.ts";

/**
 * Links the embedded issuer mails (docs/decisions/041): one proves that a person reads the
 * address they signed up with, the other lets them set a new password. A link's token is 32
 * random bytes, stored as its SHA-256 only, used at most once (a conditional update consumes it),
 * and expires: 24 hours to verify, 1 hour to reset. An account is sent at most one link of a kind
 * a minute and five an hour.
 */
export type LinkPurpose = "verify_email" | "reset_password";
const TTL_MS: Record<LinkPurpose, number> = { verify_email: 24 * 3_600_000, reset_password: 3_600_000 };
export const RESEND_INTERVAL_MS = 60_000;
const MAX_LINKS_PER_HOUR = 5;

export interface LinkDeps {
  db: Database;
  mailer: Mailer;
  publicUrl: string;
}

export type LinkRefusal = "invalid" | "used" | "expired";

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Stores a new link for the account unless it was sent one of this kind too recently; the
 * account's row is locked meanwhile, so concurrent requests cannot both pass the limit.
 */
async function issueLink(
  db: Database,
  account: { id: string; email: string },
  purpose: LinkPurpose,
): Promise<{ token: string } | { retryAfterSeconds: number }> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select 1 from ${identityAccounts} where ${identityAccounts.id} = ${account.id} for update`,
    );
    const hourAgo = new Date(Date.now() - 3_600_000);
    const [recent] = await tx
      .select({ n: count(), latest: max(identityTokens.createdAt) })
      .from(identityTokens)
      .where(
        and(
          eq(identityTokens.accountId, account.id),
          eq(identityTokens.purpose, purpose),
          gt(identityTokens.createdAt, hourAgo),
        ),
      );
    const latest = recent?.latest ? new Date(recent.latest).getTime() : 0;
    if (latest > Date.now() - RESEND_INTERVAL_MS)
      return { retryAfterSeconds: Math.ceil((latest + RESEND_INTERVAL_MS - Date.now()) / 1000) };
    if ((recent?.n ?? 0) >= MAX_LINKS_PER_HOUR)
      return { retryAfterSeconds: Math.ceil((latest + 3_600_000 - Date.now()) / 1000) };
    const token = randomBytes(32).toString("base64url");
    await tx.insert(identityTokens).values({
      accountId: account.id,
      purpose,
      tokenSha256: sha256(token),
      email: account.email,
      expiresAt: new Date(Date.now() + TTL_MS[purpose]),
    });
    return { token };
  });
}

const NOT_YOURS =
  "If you did not sign up for Promptmint, someone used your address: do not verify it; ignore this message, or choose a new password with Forgot password? on the sign-in page to make the account yours.";

/** Mails the account a link to verify its address; `sent: false` when it asked too often. */
export async function sendVerificationEmail(
  deps: LinkDeps,
  account: IdentityAccount,
): Promise<{ sent: true } | { sent: false; retryAfterSeconds: number }> {
  const issued = await issueLink(deps.db, account, "verify_email");
  if ("retryAfterSeconds" in issued) return { sent: false, retryAfterSeconds: issued.retryAfterSeconds };
  const url = `${deps.publicUrl}/oidc/verify-email?token=${issued.token}`;
  await deps.mailer.send({
    to: account.email,
    subject: "Verify your email address for Promptmint",
    text: `Hello ${account.displayName},\n\nOpen this link and enter your Promptmint password to verify that ${account.email} is yours:\n\n${url}\n\nThe link works once, for 24 hours. ${NOT_YOURS}\n`,
    html: mailHtml(
      `Hello ${account.displayName},`,
      `Open this link and enter your Promptmint password to verify that ${account.email} is yours:`,
      { label: "Verify my email address", url },
      `The link works once, for 24 hours. ${NOT_YOURS}`,
    ),
    links: [{ label: "Verify my email address", url }],
  });
  return { sent: true };
}

/**
 * Mails a password-reset link to the account with this address, if there is one and it was not
 * sent one a minute ago. Says nothing either way: the page answers the same for any address.
 */
export async function sendPasswordResetEmail(deps: LinkDeps, emailInput: string): Promise<void> {
  const email = normalizeEmail(emailInput);
  const [account] = await deps.db
    .select()
    .from(identityAccounts)
    .where(eq(identityAccounts.email, email))
    .limit(1);
  if (!account) return;
  const issued = await issueLink(deps.db, account, "reset_password");
  if ("retryAfterSeconds" in issued) return;
  const url = `${deps.publicUrl}/oidc/password/reset?token=${issued.token}`;
  await deps.mailer.send({
    to: account.email,
    subject: "Reset your Promptmint password",
    text: `Hello ${account.displayName},\n\nSomeone (hopefully you) asked to reset the password of ${account.email}. Open this link to choose a new one:\n\n${url}\n\nThe link works once, for 1 hour. If you did not ask, ignore this message: your password stays as it is.\n`,
    html: mailHtml(
      `Hello ${account.displayName},`,
      `Someone (hopefully you) asked to reset the password of ${account.email}. Open this link to choose a new one:`,
      { label: "Choose a new password", url },
      "The link works once, for 1 hour. If you did not ask, ignore this message: your password stays as it is.",
    ),
    links: [{ label: "Choose a new password", url }],
  });
}

/** Why a token cannot be used, or nothing when it can (without using it). */
export async function checkLink(
  db: Database,
  purpose: LinkPurpose,
  token: string,
): Promise<LinkRefusal | undefined> {
  const [row] = await db
    .select()
    .from(identityTokens)
    .where(and(eq(identityTokens.tokenSha256, sha256(token)), eq(identityTokens.purpose, purpose)))
    .limit(1);
  if (!row) return "invalid";
  if (row.usedAt) return "used";
  if (row.expiresAt.getTime() <= Date.now()) return "expired";
  return undefined;
}

/** Uses the token, once: the row it consumed, or why it could not. */
async function consumeLink(db: Database, purpose: LinkPurpose, token: string) {
  const [row] = await db
    .update(identityTokens)
    .set({ usedAt: new Date() })
    .where(
      and(
        eq(identityTokens.tokenSha256, sha256(token)),
        eq(identityTokens.purpose, purpose),
        isNull(identityTokens.usedAt),
        gt(identityTokens.expiresAt, new Date()),
      ),
    )
    .returning();
  if (row) return { ok: true as const, row };
  return { ok: false as const, reason: (await checkLink(db, purpose, token)) ?? "used" };
}

/** The address a usable link was sent to, or why it cannot be used (without using it). */
export async function linkAddress(
  db: Database,
  purpose: LinkPurpose,
  token: string,
): Promise<{ ok: true; email: string } | { ok: false; reason: LinkRefusal }> {
  if (!/^[\w-]{20,100}$/.test(token)) return { ok: false, reason: "invalid" };
  const refused = await checkLink(db, purpose, token);
  if (refused) return { ok: false, reason: refused };
  const [row] = await db
    .select({ email: identityTokens.email })
    .from(identityTokens)
    .where(and(eq(identityTokens.tokenSha256, sha256(token)), eq(identityTokens.purpose, purpose)))
    .limit(1);
  return row ? { ok: true, email: row.email } : { ok: false, reason: "invalid" };
}

export type VerifyRefusal =
  | { ok: false; reason: LinkRefusal }
  | { ok: false; reason: "wrong_password" | "throttled"; email: string; message: string };

/**
 * Marks the link's address verified: the account it was sent for, if that is still its address,
 * and only when the person opening it also gives that account's password. The link alone proves
 * that someone reads the mailbox; the password, that it is the person who holds the account. A
 * link alone would let whoever signed up first with somebody else's address (an ADMIN_EMAILS one)
 * have it verified by its owner's click, or by a mail scanner fetching the link: that person's
 * way is "Forgot password?", which also signs the other one out (docs/decisions/041, amended).
 * A wrong password leaves the link usable and counts as a failed sign-in (same throttle).
 */
export async function verifyEmail(
  db: Database,
  input: { token: string; password: string; ip: string },
): Promise<{ ok: true; account: IdentityAccount } | VerifyRefusal> {
  const pending = await linkAddress(db, "verify_email", input.token);
  if (!pending.ok) return pending;
  const [tokenRow] = await db
    .select({ accountId: identityTokens.accountId })
    .from(identityTokens)
    .where(eq(identityTokens.tokenSha256, sha256(input.token)))
    .limit(1);
  const checked = await signIn(db, { email: pending.email, password: input.password, ip: input.ip });
  if (!checked.ok)
    return {
      ok: false,
      reason: checked.reason === "throttled" ? "throttled" : "wrong_password",
      email: pending.email,
      message:
        checked.reason === "throttled"
          ? checked.message
          : "That is not the password of this account. If you did not create it, use Forgot password? instead.",
    };
  if (checked.account.id !== tokenRow?.accountId) return { ok: false, reason: "invalid" };
  const used = await consumeLink(db, "verify_email", input.token);
  if (!used.ok) return used;
  const [row] = await db
    .update(identityAccounts)
    .set({ emailVerifiedAt: sql`coalesce(${identityAccounts.emailVerifiedAt}, now())` })
    .where(and(eq(identityAccounts.id, used.row.accountId), eq(identityAccounts.email, used.row.email)))
    .returning();
  if (!row) return { ok: false, reason: "invalid" };
  return {
    ok: true,
    account: { id: row.id, email: row.email, displayName: row.displayName, emailVerified: true },
  };
}

/**
 * Sets a new password with a reset link. Opening the link proves the address too, so it is
 * verified; the link and any other reset link of the account stop working, and so do the
 * failed sign-ins that may have locked the address out.
 */
export async function resetPassword(
  db: Database,
  token: string,
  password: string,
): Promise<
  | { ok: true; account: IdentityAccount; provedByThisReset: boolean }
  | { ok: false; reason: LinkRefusal }
  | { ok: false; reason: "weak_password"; problem: string }
> {
  if (!/^[\w-]{20,100}$/.test(token)) return { ok: false, reason: "invalid" };
  const before = await checkLink(db, "reset_password", token);
  if (before) return { ok: false, reason: before };
  const [pending] = await db
    .select({ email: identityTokens.email })
    .from(identityTokens)
    .where(eq(identityTokens.tokenSha256, sha256(token)))
    .limit(1);
  const problem = describeWeakPassword(password, pending?.email ?? "");
  if (problem) return { ok: false, reason: "weak_password", problem };
  const passwordHash = await hash(password, ARGON2);
  const used = await consumeLink(db, "reset_password", token);
  if (!used.ok) return used;
  const [previous] = await db
    .select({ emailVerifiedAt: identityAccounts.emailVerifiedAt })
    .from(identityAccounts)
    .where(eq(identityAccounts.id, used.row.accountId))
    .limit(1);
  const [row] = await db
    .update(identityAccounts)
    .set({ passwordHash, emailVerifiedAt: sql`coalesce(${identityAccounts.emailVerifiedAt}, now())` })
    .where(and(eq(identityAccounts.id, used.row.accountId), eq(identityAccounts.email, used.row.email)))
    .returning();
  if (!row) return { ok: false, reason: "invalid" };
  await db
    .update(identityTokens)
    .set({ usedAt: new Date() })
    .where(
      and(
        eq(identityTokens.accountId, row.id),
        eq(identityTokens.purpose, "reset_password"),
        isNull(identityTokens.usedAt),
      ),
    );
  await db.delete(signInFailures).where(eq(signInFailures.email, row.email));
  return {
    ok: true,
    account: { id: row.id, email: row.email, displayName: row.displayName, emailVerified: true },
    // The address was unproved until now: whoever held the account before may not be this person.
    provedByThisReset: !previous?.emailVerifiedAt,
  };
}

function mailHtml(
  greeting: string,
  lead: string,
  link: { label: string; url: string },
  foot: string,
): string {
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#111">
<p>${escapeHtml(greeting)}</p>
<p>${escapeHtml(lead)}</p>
<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>
<p style="color:#555">${escapeHtml(foot)}</p>
</body></html>`;
}
