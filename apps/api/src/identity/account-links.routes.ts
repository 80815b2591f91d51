import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from "fastify";
import { EMBEDDED_ISSUER_KEY } from "../config.ts";
import { readOutbox } from "../lib/mailer.ts";
import type { SessionChecks } from "../modules/auth/sessions.ts";
import type { IdentityAccount } from "./accounts.ts";
import {
  checkLink,
  type LinkDeps,
  type LinkRefusal,
  linkAddress,
  resetPassword,
  sendPasswordResetEmail,
  sendVerificationEmail,
  verifyEmail,
} from "./email-links.ts";
import {
  renderConfirmEmailPage,
  renderForgotPasswordPage,
  renderLinkResultPage,
  renderOutboxPage,
  renderResetPasswordPage,
} from "./mail-pages.ts";

type FormBody = Record<string, string | undefined>;
type TokenQuery = { token?: string };

export interface AccountLinkOptions {
  links: LinkDeps;
  /** An account's address was just verified (the API marks its user, which may grant a role). */
  onEmailVerified(accountId: string): Promise<void>;
  /**
   * A reset was the first proof of the account's address: it may have been made by someone else
   * (who signed up with this address first), so the credentials it holds that outlive sessions
   * (API keys) are theirs, not this person's, and are revoked.
   */
  onAccountRecovered(accountId: string): Promise<void>;
  /** A new password ends the account's sessions (modules/auth/sessions.ts). */
  sessions: Pick<SessionChecks, "endAll">;
}

/** Where development mail can be read, when there is no mail server. */
export const outboxUrlOf = (links: LinkDeps) =>
  links.mailer.outboxDir ? `${links.publicUrl}/oidc/dev/outbox` : undefined;

/**
 * Mails a new account its verification link without making the sign-up wait for the mail server;
 * a failure is logged (never the link), and the person can ask again from the app.
 */
export function mailVerificationLink(
  links: LinkDeps,
  account: IdentityAccount,
  log: FastifyBaseLogger,
): void {
  sendVerificationEmail(links, account).catch((err: Error) =>
    log.error({ err: { message: err.message } }, "the verification email could not be sent"),
  );
}

const REFUSED: Record<LinkRefusal, string> = {
  invalid: "This link is not valid. Copy the whole link from the email, or ask for a new one.",
  used: "This link was already used: each link works once. Ask for a new one if you need it.",
  expired: "This link has expired. Ask for a new one.",
};

/**
 * The issuer's mailed links (docs/decisions/041): verify an address, forgot and reset password,
 * and the development outbox. Registered inside the pages plugin, which parses the forms.
 */
export async function accountLinkRoutes(app: FastifyInstance, options: AccountLinkOptions) {
  const { links, onEmailVerified, onAccountRecovered, sessions } = options;
  const home = { label: "Continue to Promptmint", url: `${links.publicUrl}/dashboard` };
  const outboxUrl = outboxUrlOf(links);

  const refusedVerification = (reply: FastifyReply, reason: LinkRefusal) =>
    sendPage(
      reply,
      reason === "invalid" ? 400 : 410,
      renderLinkResultPage({
        title: "This link cannot verify your email",
        message: `${REFUSED[reason]} (In Promptmint: "Resend verification email".)`,
        ok: false,
        next: home,
      }),
    );

  // Opening the link shows a form; only its POST, with the account's password, verifies.
  app.get<{ Querystring: TokenQuery }>("/oidc/verify-email", async (request, reply) => {
    const token = String(request.query.token ?? "");
    const pending = await linkAddress(links.db, "verify_email", token);
    if (!pending.ok) return refusedVerification(reply, pending.reason);
    return sendPage(reply, 200, renderConfirmEmailPage({ token, email: pending.email }));
  });

  app.post<{ Body: FormBody }>("/oidc/verify-email", async (request, reply) => {
    const token = String(request.body?.token ?? "");
    const result = await verifyEmail(links.db, {
      token,
      password: String(request.body?.password ?? ""),
      ip: request.ip,
    });
    if (!result.ok) {
      if (result.reason === "wrong_password" || result.reason === "throttled")
        return sendPage(
          reply,
          result.reason === "throttled" ? 429 : 400,
          renderConfirmEmailPage({ token, email: result.email, problem: result.message }),
        );
      return refusedVerification(reply, result.reason);
    }
    await onEmailVerified(result.account.id);
    return sendPage(
      reply,
      200,
      renderLinkResultPage({
        title: "Email address verified",
        message: `Thank you: ${result.account.email} is verified.`,
        ok: true,
        next: home,
      }),
    );
  });

  app.get("/oidc/password/forgot", async (_request, reply) =>
    sendPage(reply, 200, renderForgotPasswordPage({ outboxUrl })),
  );

  app.post<{ Body: FormBody }>("/oidc/password/forgot", async (request, reply) => {
    const email = String(request.body?.email ?? "").trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return sendPage(
        reply,
        400,
        renderForgotPasswordPage({ email, error: "Enter the email address of your account.", outboxUrl }),
      );
    await sendPasswordResetEmail(links, email).catch((err: Error) =>
      request.log.error({ err: { message: err.message } }, "the password reset email could not be sent"),
    );
    return sendPage(reply, 200, renderForgotPasswordPage({ email, sent: true, outboxUrl }));
  });

  const refusedReset = (reply: FastifyReply, reason: LinkRefusal) =>
    sendPage(
      reply,
      reason === "invalid" ? 400 : 410,
      renderLinkResultPage({
        title: "This link cannot reset your password",
        message: REFUSED[reason],
        ok: false,
        next: { label: "Ask for a new link", url: `${links.publicUrl}/oidc/password/forgot` },
      }),
    );

  app.get<{ Querystring: TokenQuery }>("/oidc/password/reset", async (request, reply) => {
    const token = String(request.query.token ?? "");
    const refused = /^[\w-]{20,100}$/.test(token)
      ? await checkLink(links.db, "reset_password", token)
      : "invalid";
    if (refused) return refusedReset(reply, refused);
    return sendPage(reply, 200, renderResetPasswordPage({ token }));
  });

  app.post<{ Body: FormBody }>("/oidc/password/reset", async (request, reply) => {
    const token = String(request.body?.token ?? "");
    const result = await resetPassword(links.db, token, String(request.body?.password ?? ""));
    if (!result.ok) {
      if (result.reason === "weak_password")
        return sendPage(reply, 400, renderResetPasswordPage({ token, problem: result.problem }));
      return refusedReset(reply, result.reason);
    }
    // A new password ends every session: whoever knew the old one is signed out too.
    await sessions.endAll({ issuer: EMBEDDED_ISSUER_KEY, subject: result.account.id });
    if (result.provedByThisReset) await onAccountRecovered(result.account.id);
    await onEmailVerified(result.account.id);
    return sendPage(
      reply,
      200,
      renderLinkResultPage({
        title: "Password changed",
        message:
          "Your new password is set, and you were signed out everywhere. Sign in with the new password.",
        ok: true,
        next: { label: "Sign in", url: `${links.publicUrl}/login` },
      }),
    );
  });

  // Development without SMTP_URL only (config.ts): never served in production.
  const outboxDir = links.mailer.outboxDir;
  if (outboxDir) {
    app.get("/oidc/dev/outbox", async (_request, reply) =>
      sendPage(reply, 200, renderOutboxPage({ dir: outboxDir, messages: await readOutbox(outboxDir) })),
    );
    app.get("/oidc/dev/outbox.json", async (_request, reply) =>
      reply.header("cache-control", "no-store").send({ messages: await readOutbox(outboxDir) }),
    );
  }
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.status(status).header("cache-control", "no-store").type("text/html; charset=utf-8").send(html);
}
