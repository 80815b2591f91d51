import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { buildApp } from "../app.ts";
import { EMBEDDED_SPA_CLIENT_ID, loadConfig } from "../config.ts";
import { queryRows } from "../db/client.ts";
import { oidcSigningKeys } from "../db/schema/index.ts";
import { createSecretBox } from "../lib/secrets.ts";
import { createTestDatabase } from "../test/database.ts";
import { signIn, signUp } from "../test/oidc-client.ts";
import { freePort, startTestServer, TEST_SECRET_KEY } from "../test/server.ts";

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

it("keeps the private signing key only sealed, and seals a plaintext key of an older version at start-up", async () => {
  const port = await freePort();
  const first = await startTestServer(testDb, { port });
  const person = await signUp(first.baseUrl);
  const jwksBefore = await (await fetch(`${first.baseUrl}/oidc/jwks`)).json();
  const db = first.database.db;
  const stored = async () => JSON.stringify(await db.select().from(oidcSigningKeys));
  const [row] = await db.select().from(oidcSigningKeys);
  expect(row?.privateJwk).toBeNull();
  expect(await stored()).not.toMatch(/"d"|"p"|"q"|"dp"|"dq"|"qi"/);

  // What a database from before 0017 holds: the key in plaintext.
  const jwk = JSON.parse(createSecretBox(TEST_SECRET_KEY).decrypt(row?.sealedJwk ?? ""));
  expect(jwk.d).toEqual(expect.any(String));
  await db
    .update(oidcSigningKeys)
    .set({ privateJwk: jwk, sealedJwk: null })
    .where(eq(oidcSigningKeys.kid, jwk.kid));
  expect(await stored()).toContain(jwk.d);
  await first.stop();

  const second = await startTestServer(testDb, { port });
  try {
    const [sealed] = await second.database.db.select().from(oidcSigningKeys);
    expect(sealed?.privateJwk).toBeNull();
    expect(JSON.stringify(sealed)).not.toContain(jwk.d);
    const plaintext = await queryRows<{ n: number }>(
      second.database.db,
      sql`select count(*)::int as n from oidc_signing_keys where private_jwk is not null`,
    );
    expect(plaintext).toEqual([{ n: 0 }]);
    // Same key: the published key set and the tokens issued before both still hold.
    expect(await (await fetch(`${second.baseUrl}/oidc/jwks`)).json()).toEqual(jwksBefore);
    const profile = await fetch(`${second.baseUrl}/api/auth/login/`, {
      method: "POST",
      headers: { authorization: `Bearer ${person.access_token}` },
    });
    expect(profile.status).toBe(200);
    const fresh = await signIn(second.baseUrl, person.email, person.password);
    expect(
      (
        await fetch(`${second.baseUrl}/api/auth/profile/`, {
          headers: { authorization: `Bearer ${fresh.access_token}` },
        })
      ).status,
    ).toBe(200);
  } finally {
    await second.stop();
  }
});

it("refuses to start with a SECRET_KEY that cannot open the signing key, saying so", async () => {
  const config = loadConfig({
    NODE_ENV: "test",
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "pm-data-")),
    SECRET_KEY: "a-different-secret-key-that-is-long-enough-000",
    LOG_LEVEL: "silent",
  });
  const database = await testDb.open();
  try {
    await expect(buildApp({ config, database, serveWeb: false })).rejects.toThrow(
      /signing key .* cannot be decrypted: SECRET_KEY differs/,
    );
  } finally {
    await database.close();
  }
});
