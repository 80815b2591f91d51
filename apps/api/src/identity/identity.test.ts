import { createHash } from "node:crypto";
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { EMBEDDED_SPA_CLIENT_ID } from "../config.ts";
import { oidcPayloads } from "../db/schema/index.ts";
import { signIn, signUp, startSignIn, uniqueEmail } from "../test/oidc-client.ts";
import { useTestServer } from "../test/use-test-server.ts";

const server = useTestServer();

describe("embedded OIDC issuer", () => {
  it("publishes discovery with S256 PKCE, revocation and end-session", async () => {
    const response = await fetch(`${server.baseUrl}/oidc/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const discovery = await response.json();
    expect(discovery.issuer).toBe(`${server.baseUrl}/oidc`);
    expect(discovery.code_challenge_methods_supported).toEqual(["S256"]);
    expect(discovery.revocation_endpoint).toBe(`${server.baseUrl}/oidc/token/revocation`);
    expect(discovery.end_session_endpoint).toBe(`${server.baseUrl}/oidc/session/end`);
    const jwks = await (await fetch(discovery.jwks_uri)).json();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0].d).toBeUndefined();
  });

  it("signs a new person up and issues a JWT access token for the API audience with a refresh token", async () => {
    const email = uniqueEmail("signup");
    const tokens = await signUp(server.baseUrl, { email, displayName: "Grace Hopper" });
    const access = decodeJwt(tokens.access_token);
    expect(access.aud).toBe(server.config.oidc.audience);
    expect(access.iss).toBe(`${server.baseUrl}/oidc`);
    expect(access.email).toBe(email);
    expect(access.name).toBe("Grace Hopper");
    expect(tokens.refresh_token).toBeTruthy();
    const idToken = decodeJwt(tokens.id_token);
    expect(idToken.email).toBe(email);
    expect(idToken.aud).toBe(EMBEDDED_SPA_CLIENT_ID);
  });

  it("opens the sign-up page directly when the SPA asks for it, the sign-in page otherwise", async () => {
    const signUpJourney = await startSignIn(server.baseUrl, { signUp: true });
    expect(signUpJourney.page.html).toContain("Create your Promptmint account");
    const signInJourney = await startSignIn(server.baseUrl);
    expect(signInJourney.page.html).toContain("Sign in to Promptmint");
  });

  it("refuses a code request without PKCE", async () => {
    const url = new URL(`${server.baseUrl}/oidc/auth`);
    url.search = new URLSearchParams({
      client_id: EMBEDDED_SPA_CLIENT_ID,
      response_type: "code",
      redirect_uri: `${server.baseUrl}/auth/callback`,
      scope: "openid",
      state: "abc",
    }).toString();
    const response = await fetch(url, { redirect: "manual" });
    const location = response.headers.get("location") ?? "";
    const params = new URL(location).searchParams;
    expect(params.get("error")).toBe("invalid_request");
    expect(params.get("error_description")).toMatch(/requires PKCE/);
  });

  it("says which problem a sign-up form has: taken email, weak password, missing name", async () => {
    const submitSignUpForm = async (form: Record<string, string>) =>
      (await startSignIn(server.baseUrl, { signUp: true })).submit("register", form);
    const email = uniqueEmail("taken");
    await signUp(server.baseUrl, { email });

    const taken = await submitSignUpForm({ email, password: "another-pass-9", display_name: "Someone" });
    expect(taken.status).toBe(409);
    expect(taken.html).toContain("An account with this email already exists");

    const weak = await submitSignUpForm({ email: uniqueEmail(), password: "short", display_name: "Someone" });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain("Password is too weak");

    const unnamed = await submitSignUpForm({
      email: uniqueEmail(),
      password: "good-password-1",
      display_name: "  ",
    });
    expect(unnamed.status).toBe(400);
    expect(unnamed.html).toContain("Enter a display name.");
  });

  it("rejects a wrong password and throttles repeated failures for that email", async () => {
    const { email, password } = await signUp(server.baseUrl);
    const wrong = await (await startSignIn(server.baseUrl)).submit("login", {
      email,
      password: "wrong-password-1",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain("Incorrect email or password.");
    expect(wrong.html).toContain(`value="${email}"`);

    for (let i = 0; i < 4; i++) {
      await (await startSignIn(server.baseUrl)).submit("login", { email, password: `wrong-${i}-password` });
    }
    const throttled = await (await startSignIn(server.baseUrl)).submit("login", { email, password });
    expect(throttled.status).toBe(429);
    expect(throttled.html).toContain("Too many failed sign-in attempts");
  });

  it("signs an existing person in, refreshes and revokes their tokens", async () => {
    const { email, password } = await signUp(server.baseUrl);
    const tokens = await signIn(server.baseUrl, email, password);
    const form = (body: Record<string, string>) => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body).toString(),
    });

    const refreshed = await fetch(
      `${server.baseUrl}/oidc/token`,
      form({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token ?? "",
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }),
    );
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json();
    expect(decodeJwt(next.access_token).aud).toBe(server.config.oidc.audience);

    const revoked = await fetch(
      `${server.baseUrl}/oidc/token/revocation`,
      form({
        token: next.refresh_token,
        token_type_hint: "refresh_token",
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }),
    );
    expect(revoked.status).toBe(200);
    const afterRevoke = await fetch(
      `${server.baseUrl}/oidc/token`,
      form({
        grant_type: "refresh_token",
        refresh_token: next.refresh_token,
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }),
    );
    expect(afterRevoke.status).toBe(400);
    expect((await afterRevoke.json()).error).toBe("invalid_grant");
  });

  it("keeps refresh tokens and authorization codes only as hashes, and they still work", async () => {
    const { email, password } = await signUp(server.baseUrl);
    const tokens = await signIn(server.baseUrl, email, password);
    const rows = await server.database.db.select().from(oidcPayloads);
    const refreshToken = tokens.refresh_token ?? "";
    expect(refreshToken.length).toBeGreaterThan(20);
    expect(rows.some((row) => row.model === "RefreshToken")).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(refreshToken);
    const refreshed = await fetch(`${server.baseUrl}/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }).toString(),
    });
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json();
    expect(JSON.stringify(await server.database.db.select().from(oidcPayloads))).not.toContain(
      next.refresh_token,
    );
  });

  it("answers a refresh token used twice at once (two tabs, or a retry after a lost answer) with one successor, and still treats a later reuse as theft", async () => {
    const { email, password } = await signUp(server.baseUrl);
    const tokens = await signIn(server.baseUrl, email, password);
    const refresh = (refreshToken: string) => refreshFrom(refreshToken);

    const [first, second] = await Promise.all([
      refresh(tokens.refresh_token ?? ""),
      refresh(tokens.refresh_token ?? ""),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    // A retry moments later (the client never got the first answer) is answered too.
    const retried = await refresh(tokens.refresh_token ?? "");
    expect(retried.status).toBe(200);
    // All three got the same successor: one chain, not three (decision 065).
    expect(second.body.refresh_token).toBe(first.body.refresh_token);
    expect(retried.body.refresh_token).toBe(first.body.refresh_token);
    expect(await liveRefreshTokens(tokens.refresh_token ?? "")).toBe(1);
    // The session lives on: every answer's access token works, and the successor renews.
    for (const answer of [first, second, retried]) expect(await profile(answer.body.access_token)).toBe(200);
    const renewed = await refresh(first.body.refresh_token);
    expect(renewed.status).toBe(200);

    // Past the grace, a used refresh token is theft: the session's grant is revoked.
    await server.database.db
      .update(oidcPayloads)
      .set({ consumedAt: sql`now() - interval '1 hour'` })
      .where(and(eq(oidcPayloads.model, "RefreshToken"), isNotNull(oidcPayloads.consumedAt)));
    const stolen = await refresh(tokens.refresh_token ?? "");
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe("invalid_grant");
    // Even the refresh token never used is refused now: the whole session ended.
    const afterTheft = await refresh(renewed.body.refresh_token);
    expect(afterTheft.status).toBe(400);
  });

  it("gives a refresh token replayed within the grace from another address the same successor, not a chain of its own", async () => {
    const { email, password } = await signUp(server.baseUrl);
    const tokens = await signIn(server.baseUrl, email, password);
    const stolenToken = tokens.refresh_token ?? "";
    const owner = await refreshFrom(stolenToken, "198.51.100.7");
    const thieves = await Promise.all(
      ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4", "203.0.113.5"].map((address) =>
        refreshFrom(stolenToken, address),
      ),
    );
    expect([owner, ...thieves].map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const thief of thieves) expect(thief.body.refresh_token).toBe(owner.body.refresh_token);
    // One live refresh token for the grant: whoever rotates it next, the other holder's next use
    // is a reuse, theft once the grace has passed.
    expect(await liveRefreshTokens(stolenToken)).toBe(1);
    const next = await refreshFrom(owner.body.refresh_token, "203.0.113.1");
    expect(next.status).toBe(200);
    expect(await liveRefreshTokens(stolenToken)).toBe(1);
  });
});

async function refreshFrom(refreshToken: string, address?: string) {
  const response = await fetch(`${server.baseUrl}/oidc/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(address ? { "x-forwarded-for": address } : {}),
    },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: EMBEDDED_SPA_CLIENT_ID,
    }).toString(),
  });
  return { status: response.status, body: await response.json() };
}

async function profile(accessToken: string): Promise<number> {
  return (
    await fetch(`${server.baseUrl}/api/auth/profile/`, {
      headers: { authorization: `Bearer ${accessToken}` },
    })
  ).status;
}

/** Refresh tokens never used in the grant `refreshToken` belongs to: the chains still alive. */
async function liveRefreshTokens(refreshToken: string): Promise<number> {
  const [token] = await server.database.db
    .select({ grantId: oidcPayloads.grantId })
    .from(oidcPayloads)
    .where(
      and(
        eq(oidcPayloads.model, "RefreshToken"),
        eq(oidcPayloads.id, createHash("sha256").update(refreshToken).digest("base64url")),
      ),
    );
  expect(token?.grantId).toBeTruthy();
  const live = await server.database.db
    .select({ id: oidcPayloads.id })
    .from(oidcPayloads)
    .where(
      and(
        eq(oidcPayloads.model, "RefreshToken"),
        eq(oidcPayloads.grantId, token?.grantId ?? ""),
        isNull(oidcPayloads.consumedAt),
      ),
    );
  return live.length;
}
