import type { AddressInfo } from "node:net";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBEDDED_SPA_CLIENT_ID } from "../config.ts";
import { SESSION_CHECK_TTL_MS } from "../modules/auth/sessions.ts";
import { signUp, startSignIn, type Tokens } from "../test/oidc-client.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { useTestServer } from "../test/use-test-server.ts";

const server = useTestServer();
let other: TestServer;
let otherUrl: string;

beforeAll(async () => {
  // A second API server (same PUBLIC_URL, so the same issuer) with its own connection: on
  // PostgreSQL it cannot see the first one's cache invalidations, like another process. PGlite
  // data can only be opened once, so there it shares the first server's connection.
  const shared = { ...server.database, close: async () => {} };
  const second =
    server.testDb.kind === "postgres" ? server.testDb : { ...server.testDb, open: async () => shared };
  other = await startTestServer(second, { env: { PUBLIC_URL: server.baseUrl } });
  otherUrl = `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await other?.stop();
});

const form = (body: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(body).toString(),
});

function profile(token: string, base = server.baseUrl) {
  return fetch(`${base}/api/auth/profile/`, { headers: { authorization: `Bearer ${token}` } });
}

function refresh(refreshToken: string | undefined) {
  return fetch(
    `${server.baseUrl}/oidc/token`,
    form({
      grant_type: "refresh_token",
      refresh_token: refreshToken ?? "",
      client_id: EMBEDDED_SPA_CLIENT_ID,
    }),
  );
}

/** A new person signed in, with the browser that holds their issuer session. */
async function signedInPerson() {
  const { email, password } = await signUp(server.baseUrl);
  const journey = await startSignIn(server.baseUrl);
  const result = await journey.submit("login", { email, password });
  if (!result.tokens) throw new Error(`sign-in failed: ${result.status}`);
  expect((await profile(result.tokens.access_token)).status).toBe(200);
  return { email, password, tokens: result.tokens as Tokens, browser: journey.browser };
}

describe("access tokens of the embedded issuer", () => {
  it("live five minutes and name their grant", async () => {
    const { tokens } = await signedInPerson();
    const claims = decodeJwt(tokens.access_token);
    expect(tokens.expires_in).toBeLessThanOrEqual(300);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(300);
    expect(claims.grant_id).toEqual(expect.any(String));
  });
});

describe("signing out through the API", () => {
  it("refuses every access token of the person at once, here and on another process, and ends their refresh tokens", async () => {
    const person = await signedInPerson();
    const secondDevice = (await startSignIn(server.baseUrl).then((j) =>
      j.submit("login", { email: person.email, password: person.password }),
    )) as { tokens: Tokens };
    expect((await profile(person.tokens.access_token, otherUrl)).status).toBe(200);

    const signedOut = await fetch(`${server.baseUrl}/api/auth/logout/`, {
      method: "POST",
      headers: { authorization: `Bearer ${person.tokens.access_token}` },
    });
    expect(signedOut.status).toBe(200);

    const refused = await profile(person.tokens.access_token);
    expect(refused.status).toBe(401);
    expect((await refused.json()).message).toMatch(/session that has ended|before you signed out/);
    expect((await profile(secondDevice.tokens.access_token)).status).toBe(401);
    for (const token of [person.tokens.refresh_token, secondDevice.tokens.refresh_token]) {
      const answer = await refresh(token);
      expect(answer.status).toBe(400);
      expect((await answer.json()).error).toBe("invalid_grant");
    }
    // The other process held a cached "alive" answer: it expires within SESSION_CHECK_TTL_MS.
    await new Promise((resolve) => setTimeout(resolve, SESSION_CHECK_TTL_MS + 100));
    expect((await profile(person.tokens.access_token, otherUrl)).status).toBe(401);
  });

  it("lets the person sign in again straight away", async () => {
    const person = await signedInPerson();
    await fetch(`${server.baseUrl}/api/auth/logout/`, {
      method: "POST",
      headers: { authorization: `Bearer ${person.tokens.access_token}` },
    });
    const again = await startSignIn(server.baseUrl).then((j) =>
      j.submit("login", { email: person.email, password: person.password }),
    );
    expect((await profile(again.tokens?.access_token ?? "")).status).toBe(200);
  });
});

describe("ending the session at the issuer", () => {
  it("revokes the grant: the access token is refused and the refresh token no longer works", async () => {
    const person = await signedInPerson();
    const end = new URL(`${server.baseUrl}/oidc/session/end`);
    end.search = new URLSearchParams({
      id_token_hint: person.tokens.id_token,
      post_logout_redirect_uri: `${server.baseUrl}/`,
    }).toString();
    const page = await (await person.browser.request(end.toString())).text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1];
    expect(xsrf).toBeTruthy();
    const confirmed = await person.browser.request(
      `${server.baseUrl}/oidc/session/end/confirm`,
      form({ xsrf: xsrf ?? "", logout: "yes" }),
    );
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("location")).toBe(`${server.baseUrl}/`);

    expect((await profile(person.tokens.access_token)).status).toBe(401);
    expect((await refresh(person.tokens.refresh_token)).status).toBe(400);
  });
});

describe("revoking a refresh token", () => {
  it("refuses the access tokens of its grant at once and leaves the person's other sessions alone", async () => {
    const person = await signedInPerson();
    const otherSession = await signedInPerson();
    const revoked = await fetch(
      `${server.baseUrl}/oidc/token/revocation`,
      form({
        token: person.tokens.refresh_token ?? "",
        token_type_hint: "refresh_token",
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }),
    );
    expect(revoked.status).toBe(200);
    expect((await profile(person.tokens.access_token)).status).toBe(401);
    expect((await refresh(person.tokens.refresh_token)).status).toBe(400);
    expect((await profile(otherSession.tokens.access_token)).status).toBe(200);
  });
});
