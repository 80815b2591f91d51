import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { signUp } from "../../test/oidc-client.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";

// The "external" issuer is a real oidc-provider: another Promptmint's embedded issuer.
let issuerDb: TestDatabase;
let apiDb: TestDatabase;
let issuer: TestServer;
let api: TestServer;

beforeAll(async () => {
  issuerDb = await createTestDatabase();
  apiDb = await createTestDatabase();
  issuer = await startTestServer(issuerDb);
  api = await startTestServer(apiDb, {
    env: {
      OIDC_ISSUER: issuer.config.oidc.issuer ?? "",
      OIDC_CLIENT_ID: "promptmint-web",
      OIDC_AUDIENCE: issuer.config.oidc.audience,
    },
  });
});
afterAll(async () => {
  await api?.stop();
  await issuer?.stop();
  await apiDb?.destroy();
  await issuerDb?.destroy();
});

it("accepts tokens of an external issuer set by OIDC_ISSUER, verified through its published key set", async () => {
  const config = await (await fetch(`${api.baseUrl}/api/config`)).json();
  expect(config.oidc).toMatchObject({
    issuer: issuer.config.oidc.issuer,
    client_id: "promptmint-web",
    embedded: false,
  });
  expect((await fetch(`${api.baseUrl}/oidc/.well-known/openid-configuration`)).status).toBe(404);

  const person = await signUp(issuer.baseUrl, { displayName: "External Person" });
  const login = await fetch(`${api.baseUrl}/api/auth/register/`, {
    method: "POST",
    headers: { authorization: `Bearer ${person.access_token}` },
  });
  expect(login.status).toBe(200);
  const profile = await login.json();
  expect(profile.user).toMatchObject({ email: person.email, display_name: "External Person" });
  expect(profile.creator).not.toBeNull();
});

it("refuses tokens whose audience is not OIDC_AUDIENCE", async () => {
  const otherDb = await createTestDatabase();
  const other = await startTestServer(otherDb, {
    env: {
      OIDC_ISSUER: issuer.config.oidc.issuer ?? "",
      OIDC_CLIENT_ID: "promptmint-web",
      OIDC_AUDIENCE: "https://another-api.example",
    },
  });
  try {
    const person = await signUp(issuer.baseUrl);
    const response = await fetch(`${other.baseUrl}/api/auth/login/`, {
      method: "POST",
      headers: { authorization: `Bearer ${person.access_token}` },
    });
    expect(response.status).toBe(401);
    expect((await response.json()).message).toBe("Access token is not meant for this API");
  } finally {
    await other.stop();
    await otherDb.destroy();
  }
});
