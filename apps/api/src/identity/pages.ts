/** Server-rendered pages of the embedded issuer. No inline script or style, so a strict CSP holds. */

import { escapeHtml } from "../lib/html.ts";
import { pageShell } from "../pages/page-shell.ts";

/** A page of the issuer: the shared page shell, signed by Promptmint ID. */
export const layout = (title: string, body: string, scripts: string[] = []) =>
  pageShell({ title, body, scripts, foot: "Secured by Promptmint ID" });

export function field(options: {
  name: string;
  label: string;
  type: string;
  value?: string;
  autocomplete: string;
  error?: string;
  hint?: string;
  autofocus?: boolean;
}): string {
  const id = `field-${options.name}`;
  const describedBy = [options.error ? `${id}-error` : "", options.hint ? `${id}-hint` : ""]
    .filter(Boolean)
    .join(" ");
  return `<div class="field">
  <label for="${id}">${escapeHtml(options.label)}</label>
  <input id="${id}" name="${options.name}" type="${options.type}" autocomplete="${options.autocomplete}" required
    ${options.value ? `value="${escapeHtml(options.value)}"` : ""}
    ${options.autofocus ? "autofocus" : ""}
    ${options.error ? 'aria-invalid="true"' : ""}
    ${describedBy ? `aria-describedby="${describedBy}"` : ""}>
  ${options.hint ? `<p class="hint" id="${id}-hint">${escapeHtml(options.hint)}</p>` : ""}
  ${options.error ? `<p class="field-error" id="${id}-error">${escapeHtml(options.error)}</p>` : ""}
</div>`;
}

export const banner = (message?: string) =>
  message ? `<div class="banner" role="alert">${escapeHtml(message)}</div>` : "";

export function renderSignInPage(options: {
  uid: string;
  email?: string;
  error?: string;
  notice?: string;
}): string {
  return layout(
    "Sign in",
    `<h1>Sign in to Promptmint</h1>
<p class="lead">Welcome back. Enter your email and password.</p>
${banner(options.error)}${options.notice ? `<p class="notice" role="status">${escapeHtml(options.notice)}</p>` : ""}
<form method="post" action="/oidc/interaction/${escapeHtml(options.uid)}/login" novalidate>
  ${field({ name: "email", label: "Email", type: "email", value: options.email, autocomplete: "username", autofocus: !options.email })}
  ${field({ name: "password", label: "Password", type: "password", autocomplete: "current-password", autofocus: Boolean(options.email) })}
  <button type="submit" class="primary">Sign in</button>
</form>
<p class="switch"><a href="/oidc/password/forgot">Forgot password?</a></p>
<p class="switch">New to Promptmint? <a href="/oidc/interaction/${escapeHtml(options.uid)}?screen=signup">Create an account</a></p>`,
  );
}

export function renderSignUpPage(options: {
  uid: string;
  values?: { email?: string; display_name?: string };
  problems?: Record<string, string>;
  error?: string;
  /** Where mail lands when no mail server is configured (development). */
  outboxUrl?: string;
}): string {
  const problems = options.problems ?? {};
  return layout(
    "Create account",
    `<h1>Create your Promptmint account</h1>
<p class="lead">Start monetizing your AI prompts today.</p>
${banner(options.error ?? (Object.keys(problems).length ? "Please fix the highlighted fields." : undefined))}
<form method="post" action="/oidc/interaction/${escapeHtml(options.uid)}/register" novalidate>
  ${field({ name: "display_name", label: "Display name", type: "text", value: options.values?.display_name, autocomplete: "name", error: problems.display_name, autofocus: true })}
  ${field({ name: "email", label: "Email", type: "email", value: options.values?.email, autocomplete: "email", error: problems.email })}
  ${field({ name: "password", label: "Password", type: "password", autocomplete: "new-password", error: problems.password, hint: "At least 8 characters, mixing letters with numbers or symbols." })}
  <button type="submit" class="primary">Create account</button>
</form>
<p class="switch">Already have an account? <a href="/oidc/interaction/${escapeHtml(options.uid)}?screen=signin">Sign in instead</a></p>
${options.outboxUrl ? `<p class="notice">No mail server is configured: open the outbox at <a href="${escapeHtml(options.outboxUrl)}">${escapeHtml(options.outboxUrl)}</a> to read the verification email.</p>\n` : ""}<p class="legal">By creating an account you agree to the Terms of Service and Privacy Policy.</p>`,
  );
}

/**
 * The consent page for a client that registered itself (an MCP client): who asks, where the
 * answer goes, and what it may do, which is spend the user's wallet on paid calls.
 */
export function renderConsentPage(options: {
  uid: string;
  clientName: string;
  redirectHost: string;
  resources: string[];
}): string {
  const uid = escapeHtml(options.uid);
  const resources = options.resources.map((url) => `<li><code>${escapeHtml(url)}</code></li>`).join("");
  return layout(
    "Allow access",
    `<h1>Allow ${escapeHtml(options.clientName)} to call paid apps?</h1>
<p class="lead">This application, which sends you back to <strong>${escapeHtml(options.redirectHost)}</strong>, asks to call Promptmint apps for you. Every call it makes is paid from your wallet or plan, at each app's price.</p>
${resources ? `<p>It would call:</p><ul class="resources">${resources}</ul>` : ""}
<p class="hint">It cannot see or change your account, keys or apps. Signing out everywhere ends its access.</p>
<form method="post" action="/oidc/interaction/${uid}/consent">
  <button type="submit" class="primary" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** RP-initiated logout: the SPA asked for it with an ID token hint, so the form submits itself. */
export function renderSignOutPage(form: string): string {
  return layout(
    "Signing out",
    `<h1>Signing you out…</h1>
<p class="lead">You are being signed out of Promptmint.</p>
${form}
<button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes" id="confirm-logout">Sign out</button>`,
    ["/oidc/assets/sign-out.js"],
  );
}

export function renderErrorPage(options: { title: string; message: string; homeUrl: string }): string {
  return layout(
    options.title,
    `<h1>${escapeHtml(options.title)}</h1>
${banner(options.message)}
<p class="switch"><a href="${escapeHtml(options.homeUrl)}/login">Back to Promptmint</a></p>`,
  );
}
