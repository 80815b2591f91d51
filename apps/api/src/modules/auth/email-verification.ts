import type { VerificationEmailResult } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import { EMBEDDED_ISSUER_KEY } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { users } from "../../db/schema/index.ts";
import { findAccountById } from "../../identity/accounts.ts";
import { type LinkDeps, sendVerificationEmail } from "../../identity/email-links.ts";
import { AppError } from "../../lib/errors.ts";
import { type Actor, writeAudit } from "../admin/audit.ts";
import { bootstrapOperator } from "../admin/operators.ts";
import { revokeEveryApiKey } from "../keys/keys.service.ts";
import { type LocalUser, markEmailVerified } from "./auth.service.ts";

/**
 * The API's side of address verification (docs/decisions/041): the embedded issuer's link marks
 * its user verified at once (no new sign-in needed), which may grant the operator role; a person
 * who lost the mail asks for another.
 */
export interface EmailVerification {
  /** The link mailed for this embedded account was opened. */
  accountVerified(accountId: string): Promise<void>;
  /**
   * A password reset was the first proof of this embedded account's address: whoever signed up
   * with it may not be the person who reads its mail, so the API keys the account holds (which
   * outlive its sessions, ended by the reset) are revoked, and the audit log says so.
   */
  accountRecovered(accountId: string): Promise<void>;
  /**
   * A user signing in: one of the embedded issuer whose link was opened before their token was
   * issued (tokens live 5 minutes) is verified now, from the issuer's own record.
   */
  refresh(user: LocalUser): Promise<LocalUser>;
  /** Mails the signed-in person a new link (the embedded issuer only). */
  resend(user: LocalUser): Promise<VerificationEmailResult>;
}

const RECOVERY_ACTOR: Actor = { id: null, email: "password reset (account recovery)" };

export function createEmailVerification(deps: {
  db: Database;
  adminEmails: string[];
  /** The embedded issuer's mail; undefined with an external issuer, which verifies addresses itself. */
  links: LinkDeps | undefined;
}): EmailVerification {
  const { db, adminEmails } = deps;

  async function verified(user: LocalUser): Promise<LocalUser> {
    const marked = await markEmailVerified(db, user);
    await bootstrapOperator(db, adminEmails, marked);
    return marked;
  }

  return {
    async accountVerified(accountId) {
      const account = await findAccountById(db, accountId);
      const [user] = await db
        .select()
        .from(users)
        .where(and(eq(users.issuer, EMBEDDED_ISSUER_KEY), eq(users.subject, accountId)))
        .limit(1);
      // A user made before the link was opened; one made later takes the claim from its token.
      if (account?.emailVerified && user && user.email === account.email) await verified(user);
    },

    async accountRecovered(accountId) {
      const [user] = await db
        .select()
        .from(users)
        .where(and(eq(users.issuer, EMBEDDED_ISSUER_KEY), eq(users.subject, accountId)))
        .limit(1);
      if (!user) return;
      const revoked = await revokeEveryApiKey(db, user.id);
      if (revoked > 0)
        await writeAudit(db, RECOVERY_ACTOR, {
          action: "api_keys.revoke_all",
          targetKind: "user",
          targetId: user.id,
          reason: `${user.email} was first proved by a password reset: the keys made before belong to whoever held the account then`,
          details: { email: user.email, revoked },
        });
    },

    async refresh(user) {
      if (user.emailVerified || !deps.links || user.issuer !== EMBEDDED_ISSUER_KEY) return user;
      const account = await findAccountById(db, user.subject);
      return account?.emailVerified && account.email === user.email ? verified(user) : user;
    },

    async resend(user) {
      if (!deps.links || user.issuer !== EMBEDDED_ISSUER_KEY)
        throw new AppError(
          "conflict",
          "Your identity provider verifies your email address: sign in there again after verifying it",
        );
      const account = await findAccountById(db, user.subject);
      if (!account) throw new AppError("conflict", "Your sign-in account no longer exists");
      if (account.emailVerified) {
        const current = account.email === user.email ? await verified(user) : user;
        return { email: account.email, email_verified: current.emailVerified, sent: false };
      }
      const result = await sendVerificationEmail(deps.links, account);
      if (!result.sent)
        throw new AppError(
          "rate_limited",
          `A verification email was sent to ${account.email} moments ago: check your inbox (and spam), or try again in ${result.retryAfterSeconds} seconds`,
          { headers: { "retry-after": String(result.retryAfterSeconds) } },
        );
      return { email: account.email, email_verified: false, sent: true };
    },
  };
}
