import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../db/client.ts";
import { identityTokens } from "../db/schema/index.ts";
import { callerAt } from "../test/caller.ts";
import { confirmVerificationLink, linkIn, startSmtpServer } from "../test/mail.ts";
import { signIn, signUp, startSignIn, uniqueEmail } from "../test/oidc-client.ts";
import { useTestServer } from "../test/use-test-server.ts";

/**
 * The embedded issuer proves addresses and resets passwords through real mail (docs/decisions/041):
 * a real SMTP server on loopback receives what the server sends through SMTP_URL.
 */
const OPERATOR = uniqueEmail("operator");
const SQUATTED = uniqueEmail("squatted-operator");
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
const logLines: string[] = [];

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp?.stop());
const server = useTestServer(() => ({
  env: {
    SMTP_URL: smtp.url,
    MAIL_FROM: "Promptmint Test <no-reply@promptmint.test>",
    ADMIN_EMAILS: `someone@else.test, ${OPERATOR.toUpperCase()}, ${SQUATTED}`,
    LOG_LEVEL: "info",
  },
  logStream: { write: (line) => void logLines.push(line) },
}));

const verifyLinkPrefix = () => `${server.baseUrl}/oidc/verify-email?token=`;
const resetLinkPrefix = () => `${server.baseUrl}/oidc/password/reset?token=`;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("email verification by mail", () => {
  it("mails a link through SMTP at sign-up; opening it makes email_verified true in the ID and access tokens and on the API's user", async () => {
    const email = uniqueEmail("verify");
    const tokens = await signUp(server.baseUrl, { email, displayName: "Grace Hopper" });
    const person = callerAt(server.baseUrl, { email, token: tokens.access_token });
    expect((await person.api("POST", "/api/auth/login/")).body.user.email_verified).toBe(false);
    expect(decodeJwt(tokens.id_token).email_verified).toBe(false);
    expect(decodeJwt(tokens.access_token).email_verified).toBe(false);

    const mail = await smtp.waitFor(email, /verify-email/);
    expect(mail.from).toBe("no-reply@promptmint.test");
    expect(mail.raw).toMatch(/^Subject: Verify your email address for Promptmint/m);
    const link = linkIn(mail, verifyLinkPrefix());
    const token = new URL(link).searchParams.get("token") ?? "";
    // Stored as its SHA-256 only.
    const stored = await server.database.db
      .select()
      .from(identityTokens)
      .where(eq(identityTokens.email, email));
    expect(stored.map((row) => row.tokenSha256)).toEqual([sha256(token)]);
    expect(JSON.stringify(stored)).not.toContain(token);

    // Opening the link alone verifies nothing (a mail scanner fetches links): it asks for the password.
    const form = await fetch(link);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("Enter the password of the Promptmint account");
    expect((await person.api("GET", "/api/auth/profile/")).body.user.email_verified).toBe(false);
    const opened = await confirmVerificationLink(link, tokens.password);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain("Email address verified");

    // The API's user is verified at once, even with the token issued before the link was opened.
    expect((await person.api("GET", "/api/auth/profile/")).body.user.email_verified).toBe(true);
    // (The SPA's access tokens are for the API audience, so userinfo is not theirs to read: the
    // ID token carries the same claims, from the same findAccount.)
    const again = await signIn(server.baseUrl, email, tokens.password);
    expect(decodeJwt(again.id_token).email_verified).toBe(true);
    expect(decodeJwt(again.access_token).email_verified).toBe(true);

    // Single use: the same link again is refused, and so is a made-up one.
    const reused = await fetch(link);
    expect(reused.status).toBe(410);
    expect(await reused.text()).toContain("already used");
    expect((await fetch(`${verifyLinkPrefix()}${"x".repeat(43)}`)).status).toBe(400);
    // No log line carries the token (the request log redacts it).
    expect(logLines.join("\n")).not.toContain(token);
    expect(logLines.join("\n")).toContain("/oidc/verify-email?token=[redacted]");
  });

  it("refuses an expired verification link", async () => {
    const email = uniqueEmail("expired");
    await signUp(server.baseUrl, { email });
    const link = linkIn(await smtp.waitFor(email, /verify-email/), verifyLinkPrefix());
    await server.database.db
      .update(identityTokens)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(identityTokens.email, email));
    const refused = await fetch(link);
    expect(refused.status).toBe(410);
    expect(await refused.text()).toContain("expired");
  });

  it("resends a link at most once a minute, and says when the address is already verified", async () => {
    const email = uniqueEmail("resend");
    const tokens = await signUp(server.baseUrl, { email });
    const person = callerAt(server.baseUrl, { email, token: tokens.access_token });
    await smtp.waitFor(email, /verify-email/);
    const throttled = await person.api("POST", "/api/auth/verification-email/");
    expect(throttled.status).toBe(429);
    expect(throttled.body.code).toBe("rate_limited");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);

    // A minute later: a new link, and the first one still works once.
    await server.database.db
      .update(identityTokens)
      .set({ createdAt: sql`now() - interval '2 minutes'` })
      .where(eq(identityTokens.email, email));
    const before = smtp.messages.filter((m) => m.to.includes(email)).length;
    const resent = await person.api("POST", "/api/auth/verification-email/");
    expect(resent.status).toBe(200);
    expect(resent.body).toEqual({ email, email_verified: false, sent: true });
    await expect.poll(() => smtp.messages.filter((m) => m.to.includes(email)).length).toBe(before + 1);
    const newest = linkIn(await smtp.waitFor(email, /verify-email/), verifyLinkPrefix());
    expect((await confirmVerificationLink(newest, tokens.password)).status).toBe(200);

    const done = await person.api("POST", "/api/auth/verification-email/");
    expect(done.body).toEqual({ email, email_verified: true, sent: false });
  });
});

describe("password reset by mail", () => {
  it("offers Forgot password, mails a single-use link, and the old password stops working", async () => {
    const email = uniqueEmail("reset");
    const { password } = await signUp(server.baseUrl, { email });
    const journey = await startSignIn(server.baseUrl);
    expect(journey.page.html).toContain('href="/oidc/password/forgot"');
    expect(journey.page.html).toContain("Forgot password?");

    const form = (path: string, body: Record<string, string>) =>
      fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body).toString(),
      });
    const asked = await form("/oidc/password/forgot", { email: email.toUpperCase() });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain("If an account exists");
    // An unknown address gets the same answer, and no mail.
    const unknown = await form("/oidc/password/forgot", { email: "nobody-here@example.com" });
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toContain("If an account exists");

    const link = linkIn(await smtp.waitFor(email, /password\/reset/), resetLinkPrefix());
    expect(smtp.messages.some((m) => m.to.includes("nobody-here@example.com"))).toBe(false);
    const token = new URL(link).searchParams.get("token") ?? "";
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Choose a new password");

    const weak = await form("/oidc/password/reset", { token, password: "short" });
    expect(weak.status).toBe(400);
    expect(await weak.text()).toContain("Password is too weak");
    const reset = await form("/oidc/password/reset", { token, password: "brand-new-pass-42" });
    expect(reset.status).toBe(200);
    expect(await reset.text()).toContain("Password changed");

    const old = await (await startSignIn(server.baseUrl)).submit("login", { email, password });
    expect(old.status).toBe(401);
    const fresh = await signIn(server.baseUrl, email, "brand-new-pass-42");
    // Opening a mailed link proves the address too.
    expect(decodeJwt(fresh.id_token).email_verified).toBe(true);

    const reused = await form("/oidc/password/reset", { token, password: "another-pass-43" });
    expect(reused.status).toBe(410);
    expect((await fetch(link)).status).toBe(410);
    await expect(
      (await startSignIn(server.baseUrl)).submit("login", { email, password: "another-pass-43" }),
    ).resolves.toMatchObject({ status: 401 });
  });

  it("refuses an expired reset link", async () => {
    const email = uniqueEmail("reset-expired");
    await signUp(server.baseUrl, { email });
    await fetch(`${server.baseUrl}/oidc/password/forgot`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email }).toString(),
    });
    const link = linkIn(await smtp.waitFor(email, /password\/reset/), resetLinkPrefix());
    await server.database.db
      .update(identityTokens)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(identityTokens.purpose, "reset_password"));
    const refused = await fetch(link);
    expect(refused.status).toBe(410);
    expect(await refused.text()).toContain("expired");
  });
});

describe("operator rights follow a verified address, not the address alone", () => {
  it("refuses an ADMIN_EMAILS address until its owner opens the mailed link, then grants the role and audits it", async () => {
    const tokens = await signUp(server.baseUrl, { email: OPERATOR, displayName: "Claimant" });
    const claimant = callerAt(server.baseUrl, { email: OPERATOR, token: tokens.access_token });
    expect((await claimant.api("POST", "/api/auth/register/")).status).toBe(200);
    const refused = await claimant.api("GET", "/api/admin/access");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("email_unverified");
    expect(refused.body.message).toContain("not verified");
    expect((await claimant.api("GET", "/api/admin/overview")).status).toBe(403);
    expect((await claimant.api("GET", "/api/auth/roles/")).body.roles).not.toContain("operator");

    const link = linkIn(await smtp.waitFor(OPERATOR, /verify-email/), verifyLinkPrefix());
    expect((await confirmVerificationLink(link, tokens.password)).status).toBe(200);
    expect((await claimant.api("GET", "/api/admin/access")).status).toBe(200);
    expect((await claimant.api("GET", "/api/auth/roles/")).body.roles).toContain("operator");
    const audit = await claimant.api("GET", "/api/admin/audit");
    expect(audit.status).toBe(200);
    const grants = await queryRows<{ actor_email: string; action: string; details: { email: string } }>(
      server.database.db,
      sql`select actor_email, action, details from audit_log where action = 'operator.grant' and details->>'email' = ${OPERATOR}`,
    );
    expect(grants).toEqual([
      { actor_email: "ADMIN_EMAILS bootstrap", action: "operator.grant", details: { email: OPERATOR } },
    ]);
  });

  it("refuses payout onboarding for an unverified creator with email_unverified, and allows it once verified", async () => {
    const email = uniqueEmail("payee");
    const tokens = await signUp(server.baseUrl, { email });
    const creator = callerAt(server.baseUrl, { email, token: tokens.access_token });
    expect((await creator.api("POST", "/api/auth/register/")).status).toBe(200);
    const refused = await creator.api("POST", "/api/payouts/onboarding");
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "email_unverified", status: 403 });
    expect(refused.body.message).toContain(email);

    const link = linkIn(await smtp.waitFor(email, /verify-email/), verifyLinkPrefix());
    expect((await confirmVerificationLink(link, tokens.password)).status).toBe(200);
    const allowed = await creator.api("POST", "/api/payouts/onboarding");
    expect(allowed.status).toBe(200);
    expect(allowed.body.url).toContain("/api/payouts/sandbox/onboarding/");
  });

  it("an ADMIN_EMAILS address someone else signed up with: its owner opening the link (or a mail scanner) grants the squatter nothing; a password reset takes the account, keys included", async () => {
    // The squatter signs up first with the operator's address, and makes a key.
    const squatterTokens = await signUp(server.baseUrl, { email: SQUATTED, password: "squatter-pass-1" });
    const squatter = callerAt(server.baseUrl, { email: SQUATTED, token: squatterTokens.access_token });
    expect((await squatter.api("POST", "/api/auth/register/")).status).toBe(200);
    const key = await squatter.api("POST", "/api/keys/", { body: { name: "kept" } });
    expect(key.status).toBe(201);
    // The key works (the call is refused for its body, not its key).
    const before = await squatter.api("POST", "/api/v1/chat/completions", { auth: key.body.key, body: {} });
    expect(before.status).toBe(400);

    // The mail reaches the real owner. Their mail scanner fetches the link; they click it too.
    const link = linkIn(await smtp.waitFor(SQUATTED, /verify-email/), verifyLinkPrefix());
    expect((await fetch(link)).status).toBe(200);
    const clicked = await fetch(link);
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain("Did not create this account?");
    // They do not know the squatter's password: a wrong one verifies nothing.
    const token = new URL(link).searchParams.get("token") ?? "";
    const post = (password: string) =>
      fetch(`${server.baseUrl}/oidc/verify-email`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, password }).toString(),
      });
    const wrong = await post("owner-guess-22");
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("not the password of this account");
    const refused = await squatter.api("GET", "/api/admin/access");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("email_unverified");
    expect((await squatter.api("GET", "/api/auth/profile/")).body.user.email_verified).toBe(false);
    // Guessing is throttled like sign-in.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) statuses.push((await post(`guess-${attempt}-pass`)).status);
    expect(statuses.at(-1)).toBe(429);

    // The owner's way: Forgot password? The reset ends the squatter's sessions and revokes their key.
    await fetch(`${server.baseUrl}/oidc/password/forgot`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: SQUATTED }).toString(),
    });
    const resetLink = linkIn(await smtp.waitFor(SQUATTED, /password\/reset/), resetLinkPrefix());
    const reset = await fetch(`${server.baseUrl}/oidc/password/reset`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: new URL(resetLink).searchParams.get("token") ?? "",
        password: "owner-pass-33",
      }).toString(),
    });
    expect(reset.status).toBe(200);
    expect((await squatter.api("GET", "/api/auth/profile/")).status).toBe(401);
    const keyCall = await squatter.api("POST", "/api/v1/chat/completions", { auth: key.body.key, body: {} });
    expect(keyCall.status).toBe(401);
    expect(JSON.stringify(keyCall.body)).toContain("revoked");
    const owner = await signIn(server.baseUrl, SQUATTED, "owner-pass-33");
    const ownerCaller = callerAt(server.baseUrl, { email: SQUATTED, token: owner.access_token });
    expect((await ownerCaller.api("GET", "/api/admin/access")).status).toBe(200);
    expect((await ownerCaller.api("GET", "/api/keys/")).body).toEqual([]);
    const revokedAll = await queryRows<{ action: string }>(
      server.database.db,
      sql`select action from audit_log where action = 'api_keys.revoke_all' and details->>'email' = ${SQUATTED}`,
    );
    expect(revokedAll).toHaveLength(1);
  });
});
