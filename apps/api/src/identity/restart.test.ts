import { afterAll, expect, it } from "vitest";
import { EMBEDDED_SPA_CLIENT_ID } from "../config.ts";
import { createTestDatabase } from "../test/database.ts";
import { signIn, signUp } from "../test/oidc-client.ts";
import { freePort, startTestServer } from "../test/server.ts";

const testDb = await createTestDatabase();
afterAll(() => testDb.destroy());

it("keeps users, sessions and signing keys across a restart", async () => {
  const port = await freePort();
  const first = await startTestServer(testDb, { port });
  const person = await signUp(first.baseUrl, { displayName: "Before Restart" });
  const registered = await fetch(`${first.baseUrl}/api/auth/register/`, {
    method: "POST",
    headers: { authorization: `Bearer ${person.access_token}` },
  });
  expect(registered.status).toBe(200);
  const jwksBefore = await (await fetch(`${first.baseUrl}/oidc/jwks`)).json();
  await first.stop();

  const second = await startTestServer(testDb, { port });
  try {
    const jwksAfter = await (await fetch(`${second.baseUrl}/oidc/jwks`)).json();
    expect(jwksAfter).toEqual(jwksBefore);

    // The access token issued before the restart is still accepted, and the user is still there.
    const profile = await fetch(`${second.baseUrl}/api/auth/profile/`, {
      headers: { authorization: `Bearer ${person.access_token}` },
    });
    expect(profile.status).toBe(200);
    expect((await profile.json()).user).toMatchObject({
      email: person.email,
      display_name: "Before Restart",
    });

    // The refresh token (stored in the database) still works: the session survived.
    const refreshed = await fetch(`${second.baseUrl}/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: person.refresh_token ?? "",
        client_id: EMBEDDED_SPA_CLIENT_ID,
      }).toString(),
    });
    expect(refreshed.status).toBe(200);
    expect((await refreshed.json()).access_token).toBeTruthy();
  } finally {
    await second.stop();
  }
});

it("keeps each person's account when PUBLIC_URL changes", async () => {
  const first = await startTestServer(testDb);
  const person = await signUp(first.baseUrl, { displayName: "Moving House" });
  const before = await fetch(`${first.baseUrl}/api/auth/register/`, {
    method: "POST",
    headers: { authorization: `Bearer ${person.access_token}` },
  });
  const { user } = await before.json();
  await first.stop();

  const moved = await startTestServer(testDb, { port: await freePort() });
  try {
    expect(moved.baseUrl).not.toBe(first.baseUrl);
    const tokens = await signIn(moved.baseUrl, person.email, person.password);
    const after = await fetch(`${moved.baseUrl}/api/auth/login/`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    const profile = await after.json();
    expect(profile.user.id).toBe(user.id);
    expect(profile.creator).not.toBeNull();
  } finally {
    await moved.stop();
  }
});
