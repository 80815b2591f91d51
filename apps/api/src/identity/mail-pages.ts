/** The embedded issuer's pages for mailed links: forgot and reset password, link results, the dev outbox. */

import { escapeHtml } from "../lib/html.ts";
import type { OutboxMessage } from "../lib/mailer.ts";
import { banner, field, layout } from "./pages.ts";

export function renderForgotPasswordPage(options: {
  email?: string;
  error?: string;
  sent?: boolean;
  outboxUrl?: string;
}): string {
  const outbox = options.outboxUrl
    ? `<p class="notice">No mail server is configured: open the outbox at <a href="${escapeHtml(options.outboxUrl)}">${escapeHtml(options.outboxUrl)}</a>.</p>`
    : "";
  if (options.sent)
    return layout(
      "Check your email",
      `<h1>Check your email</h1>
<p class="lead" role="status">If an account exists for ${escapeHtml(options.email ?? "that address")}, we sent it a link to choose a new password. The link works once, for 1 hour.</p>
${outbox}
<p class="switch"><a href="/login">Back to sign in</a></p>`,
    );
  return layout(
    "Forgot password",
    `<h1>Forgot your password?</h1>
<p class="lead">Enter your account's email: we will mail you a link to choose a new password.</p>
${banner(options.error)}
<form method="post" action="/oidc/password/forgot" novalidate>
  ${field({ name: "email", label: "Email", type: "email", value: options.email, autocomplete: "username", autofocus: true })}
  <button type="submit" class="primary">Send reset link</button>
</form>
${outbox}
<p class="switch"><a href="/login">Back to sign in</a></p>`,
  );
}

export function renderResetPasswordPage(options: { token: string; problem?: string }): string {
  return layout(
    "Choose a new password",
    `<h1>Choose a new password</h1>
<p class="lead">Your new password replaces the old one, which stops working.</p>
${banner(options.problem ? "Please fix the highlighted field." : undefined)}
<form method="post" action="/oidc/password/reset" novalidate>
  <input type="hidden" name="token" value="${escapeHtml(options.token)}">
  ${field({ name: "password", label: "New password", type: "password", autocomplete: "new-password", error: options.problem, hint: "At least 8 characters, mixing letters with numbers or symbols.", autofocus: true })}
  <button type="submit" class="primary">Set new password</button>
</form>`,
  );
}

/**
 * A verification link's page: the link alone does not verify (a mail scanner, or the address's
 * owner clicking a link for an account someone else made, would); the account's password does.
 */
export function renderConfirmEmailPage(options: { token: string; email: string; problem?: string }): string {
  return layout(
    "Verify your email address",
    `<h1>Verify your email address</h1>
<p class="lead">Enter the password of the Promptmint account of ${escapeHtml(options.email)} to confirm that the address is yours.</p>
${banner(options.problem ? "Please fix the highlighted field." : undefined)}
<form method="post" action="/oidc/verify-email" novalidate>
  <input type="hidden" name="token" value="${escapeHtml(options.token)}">
  <input type="hidden" name="email" value="${escapeHtml(options.email)}" autocomplete="username">
  ${field({ name: "password", label: "Password", type: "password", autocomplete: "current-password", error: options.problem, autofocus: true })}
  <button type="submit" class="primary">Verify my email address</button>
</form>
<p class="notice">Did not create this account? Someone used your address. Do not verify it: <a href="/oidc/password/forgot">choose a new password</a> instead, which makes the account yours and signs everyone else out.</p>`,
  );
}

/** What happened to a mailed link: verified, password changed, or why the link is refused. */
export function renderLinkResultPage(options: {
  title: string;
  message: string;
  ok: boolean;
  next: { label: string; url: string };
}): string {
  return layout(
    options.title,
    `<h1>${escapeHtml(options.title)}</h1>
${options.ok ? `<p class="lead" role="status">${escapeHtml(options.message)}</p>` : banner(options.message)}
<p class="switch"><a href="${escapeHtml(options.next.url)}">${escapeHtml(options.next.label)}</a></p>`,
  );
}

/** A moment as people read it (`29 Nov 2026, 23:14 UTC`), never a raw ISO string; the ISO form stays in `datetime`. */
function readableTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getUTCDate()} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()}, ${two(date.getUTCHours())}:${two(date.getUTCMinutes())} UTC`;
}

/** The development outbox: every message the server would have mailed, newest first. */
export function renderOutboxPage(options: { dir: string; messages: OutboxMessage[] }): string {
  const items = options.messages
    .map(
      (message) => `<li>
  <strong>${escapeHtml(message.subject)}</strong><br>
  to ${escapeHtml(message.to)} · <time datetime="${escapeHtml(message.created_at)}">${escapeHtml(readableTime(message.created_at))}</time><br>
  ${message.links.map((link) => `<a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a>`).join(" · ")}
</li>`,
    )
    .join("\n");
  return layout(
    "Outbox",
    `<h1>Outbox</h1>
<p class="lead">No mail server is configured (SMTP_URL), so this development server keeps its mail here and in <code>${escapeHtml(options.dir)}</code> (.eml files).</p>
${items ? `<ul class="outbox" aria-label="Messages">${items}</ul>` : "<p>No messages yet.</p>"}`,
  );
}
