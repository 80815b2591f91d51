import { beforeAll, describe, expect, it } from "vitest";
import { signIn, signUp, type Tokens, uniqueEmail } from "../../test/oidc-client.ts";
import { forgeToken, unsignedToken } from "../../test/tokens.ts";
import { useTestServer } from "../../test/use-test-server.ts";
import { namePartsOf } from "./auth.service.ts";

const server = useTestServer();
let creator: Tokens & { email: string; password: string };

beforeAll(async () => {
  creator = await signUp(server.baseUrl, { displayName: "Ada Lovelace" });
  await api("POST", "/api/auth/register/", { token: creator.access_token });
});

/** The creator's token as the issuer would sign it, but expired `seconds` ago. */
async function creatorTokenExpiredSecondsAgo(seconds: number): Promise<string> {
  const { iss, sub } = JSON.parse(
    Buffer.from(creator.access_token.split(".")[1] ?? "", "base64url").toString(),
  );
  return forgeToken(server.database.db, {
    iss,
    aud: server.config.oidc.audience,
    sub,
    exp: Math.floor(Date.now() / 1000) - seconds,
  });
}

async function api(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined || options.rawBody !== undefined)
    headers["content-type"] = "application/json";
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    body: options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

describe("every protected route refuses bad credentials", () => {
  it("answers 401 for no token, expired, other audience, other key, alg none and garbage", async () => {
    const doc = (await api("GET", "/api/openapi.json")).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const protectedRoutes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.security && operation.security.length > 0)
        .map(([method]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "some-id") })),
    );
    expect(protectedRoutes.length).toBeGreaterThanOrEqual(8);

    const { iss, sub } = JSON.parse(
      Buffer.from(creator.access_token.split(".")[1] ?? "", "base64url").toString(),
    );
    const aud = server.config.oidc.audience;
    const now = Math.floor(Date.now() / 1000);
    const badTokens: Record<string, string | undefined> = {
      none: undefined,
      expired: await forgeToken(server.database.db, { iss, aud, sub, exp: now - 301 }),
      otherAudience: await forgeToken(server.database.db, {
        iss,
        aud: "https://other.example/api",
        sub,
        exp: now + 600,
      }),
      otherKey: await forgeToken(server.database.db, { iss, aud, sub, exp: now + 600 }, { foreignKey: true }),
      otherIssuer: await forgeToken(server.database.db, {
        iss: "https://evil.example",
        aud,
        sub,
        exp: now + 600,
      }),
      algNone: unsignedToken({ iss, aud, sub, exp: now + 600, iat: now }),
      garbage: "not-a-jwt",
    };

    const failures: string[] = [];
    for (const route of protectedRoutes) {
      for (const [kind, token] of Object.entries(badTokens)) {
        const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
        const response = await api(route.method, route.path, { token, body });
        // Dify-style routes answer {code}, the OpenAI-compatible ones {error: {type}}.
        const refused =
          response.body?.code === "unauthorized" || response.body?.error?.type === "authentication_error";
        if (response.status !== 401 || !refused) {
          failures.push(`${route.method} ${route.path} with ${kind}: ${response.status}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("tells the caller why a token was refused", async () => {
    const expired = await creatorTokenExpiredSecondsAgo(400);
    const response = await api("GET", "/api/auth/profile/", { token: expired });
    expect(response.body.message).toBe("Access token has expired");
    expect(response.headers.get("www-authenticate")).toContain("invalid_token");
  });

  it("accepts a token that expired within the 300 s clock tolerance", async () => {
    const justExpired = await creatorTokenExpiredSecondsAgo(60);
    expect((await api("GET", "/api/auth/profile/", { token: justExpired })).status).toBe(200);
  });
});

describe("first and last name from the issuer's claims", () => {
  it("takes given_name and family_name when the issuer sends them, else splits the one name at its first space", () => {
    expect(namePartsOf({ given_name: "Grace", family_name: "Hopper" }, "Amazing Grace")).toEqual({
      firstName: "Grace",
      lastName: "Hopper",
    });
    expect(namePartsOf({}, "Mary  Ann Evans")).toEqual({ firstName: "Mary", lastName: "Ann Evans" });
    expect(namePartsOf({ given_name: 7 }, "Plato")).toEqual({ firstName: "Plato", lastName: "" });
    expect(namePartsOf({}, "")).toEqual({ firstName: "", lastName: "" });
  });
});

describe("sign-in and profile", () => {
  it("register creates the user and their creator record from the token's claims", async () => {
    const response = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    expect(response.status).toBe(200);
    expect(response.body.user).toMatchObject({
      email: creator.email,
      display_name: "Ada Lovelace",
      // The embedded issuer's sign-up asks for one name: the profile's first and last come from it.
      first_name: "Ada",
      last_name: "Lovelace",
      is_active: true,
    });
    expect(response.body.user.username).toBe(creator.email.split("@")[0]);
    expect(response.body.creator).toMatchObject({ plan: "free", credits: 0, display_name: "Ada Lovelace" });
    expect((await api("GET", "/api/auth/roles/", { token: creator.access_token })).body).toEqual({
      roles: ["user", "creator"],
      is_creator: true,
    });
  });

  it("login alone makes a user without a creator record", async () => {
    const person = await signUp(server.baseUrl, { displayName: "Consumer" });
    const login = await api("POST", "/api/auth/login/", { token: person.access_token });
    expect(login.status).toBe(200);
    expect(login.body.creator).toBeNull();
    expect((await api("GET", "/api/creators/me/", { token: person.access_token })).status).toBe(404);
    expect((await api("GET", "/api/auth/roles/", { token: person.access_token })).body.roles).toEqual([
      "user",
    ]);
  });

  it("logging in twice keeps one user", async () => {
    const again = await signIn(server.baseUrl, creator.email, creator.password);
    const first = await api("POST", "/api/auth/login/", { token: again.access_token });
    const second = await api("POST", "/api/auth/login/", { token: again.access_token });
    expect(first.body.user.id).toBe(second.body.user.id);
    expect(first.body.creator).not.toBeNull();
  });

  it("updates names, username and creator display name, echoing read-only fields unchanged", async () => {
    const { body: profile } = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    const username = `ada${Date.now().toString(36)}`;
    const response = await api("PATCH", "/api/auth/profile/", {
      token: creator.access_token,
      body: {
        user: { ...profile.user, first_name: "Ada", last_name: "Byron", display_name: "Countess", username },
        creator: { ...profile.creator, display_name: "Ada's Prompts" },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.user).toMatchObject({
      first_name: "Ada",
      last_name: "Byron",
      display_name: "Countess",
      username,
    });
    expect(response.body.creator.display_name).toBe("Ada's Prompts");
    const reread = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    expect(reread.body).toEqual(response.body);
  });

  it("refuses a PATCH that tries to change the email", async () => {
    const { body: profile } = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    const response = await api("PATCH", "/api/auth/profile/", {
      token: creator.access_token,
      body: { user: { ...profile.user, email: "someone-else@example.com" }, creator: null },
    });
    expect(response.status).toBe(400);
    expect(response.body.fields).toEqual({ "user.email": "cannot be changed" });
    expect((await api("GET", "/api/auth/profile/", { token: creator.access_token })).body.user.email).toBe(
      creator.email,
    );
  });

  it("refuses changes to plan, credits, is_active and id", async () => {
    const { body: profile } = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    const response = await api("PATCH", "/api/auth/profile/", {
      token: creator.access_token,
      body: {
        user: { ...profile.user, is_active: false, id: "00000000-0000-0000-0000-000000000000" },
        creator: { ...profile.creator, plan: "enterprise", credits: 1_000_000 },
      },
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body.fields).sort()).toEqual([
      "creator.credits",
      "creator.plan",
      "user.id",
      "user.is_active",
    ]);
    const after = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    expect(after.body.creator).toMatchObject({ plan: "free", credits: 0 });
  });

  it("answers 409 naming the field when the username is taken", async () => {
    const other = await signUp(server.baseUrl);
    const { body: otherProfile } = await api("POST", "/api/auth/login/", { token: other.access_token });
    const { body: mine } = await api("GET", "/api/auth/profile/", { token: creator.access_token });
    const response = await api("PATCH", "/api/auth/profile/", {
      token: creator.access_token,
      body: { user: { ...mine.user, username: otherProfile.user.username.toUpperCase() }, creator: null },
    });
    expect(response.status).toBe(409);
    expect(response.body.fields).toEqual({ "user.username": "is already taken" });
  });

  it("lists creators publicly known by display name", async () => {
    const response = await api("GET", "/api/creators/", { token: creator.access_token });
    expect(response.status).toBe(200);
    expect(response.body.some((c: { display_name: string }) => c.display_name === "Ada's Prompts")).toBe(
      true,
    );
    expect(Object.keys(response.body[0]).sort()).toEqual(["display_name", "id"]);
  });

  it("acknowledges logout, after which the token is refused (identity/sign-out.test.ts has the rest)", async () => {
    const leaving = await signUp(server.baseUrl);
    expect((await api("POST", "/api/auth/logout/", { token: leaving.access_token })).body).toEqual({
      success: true,
    });
    expect((await api("GET", "/api/auth/profile/", { token: leaving.access_token })).status).toBe(401);
  });
});

describe("bad bodies get 400 naming the problem", () => {
  const patch = (body: unknown, rawBody?: string) =>
    api("PATCH", "/api/auth/profile/", { token: creator.access_token, body, rawBody });

  it("names a field with the wrong type", async () => {
    const response = await patch({ user: { first_name: 42 } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("bad_request");
    expect(Object.keys(response.body.fields)).toEqual(["user.first_name"]);
    expect(response.body.message).toContain("user.first_name");
  });

  it("names an unknown field", async () => {
    const response = await patch({ user: { first_name: "A", is_admin: true } });
    expect(response.status).toBe(400);
    expect(response.body.fields).toEqual({ "user.is_admin": "is not an allowed field" });
  });

  it("names a missing required object", async () => {
    const response = await patch({ creator: null });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body.fields)).toEqual(["user"]);
  });

  it("rejects malformed JSON and an invalid username", async () => {
    const malformed = await patch(undefined, '{"user": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toBe("Request body is not valid JSON");
    const invalid = await patch({ user: { username: "has spaces!" } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.fields["user.username"]).toMatch(/letters, digits/);
  });

  it("rejects a body over the 1 MiB limit with 413", async () => {
    const response = await patch(undefined, JSON.stringify({ user: { first_name: "x".repeat(1_100_000) } }));
    expect(response.status).toBe(413);
    expect(response.body.code).toBe("payload_too_large");
  });

  it("answers unknown API routes with 404 in the error shape", async () => {
    const response = await api("GET", "/api/nope/");
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: "not_found", status: 404 });
  });
});

describe("service endpoints", () => {
  it("serves health, readiness, metrics, runtime config and the OpenAPI document under /api and /api/v1", async () => {
    expect((await api("GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await api("GET", "/readyz")).body).toEqual({ status: "ready" });
    const metrics = await fetch(`${server.baseUrl}/metrics`);
    expect(await metrics.text()).toContain("http_request_duration_seconds");
    const config = await api("GET", "/api/config");
    expect(config.body.oidc).toMatchObject({
      issuer: `${server.baseUrl}/oidc`,
      client_id: "promptmint-web",
      embedded: true,
    });
    expect((await api("GET", "/api/v1/config")).body).toEqual(config.body);
    const doc = (await api("GET", "/api/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/auth/profile/");
    // People and client generators read the API only, the paid endpoints first; the issuer's
    // pages and the web app's files are in the complete document the security suite reads.
    expect(Object.keys(doc.paths).filter((p: string) => !p.startsWith("/api/"))).toEqual([]);
    expect(Object.values(doc.paths[Object.keys(doc.paths)[0] as string] as object)[0].tags).toEqual([
      "gateway",
    ]);
    expect(doc.tags.map((tag: { name: string }) => tag.name).slice(0, 2)).toEqual(["gateway", "openai"]);
    const complete = (await api("GET", "/api/openapi.json?internal=true")).body;
    expect(Object.keys(complete.paths)).toEqual(expect.arrayContaining(["/oidc/{*}", "/api/auth/profile/"]));
    // Only the OpenAI-compatible routes are documented under /api/v1; the rest are aliases of /api.
    expect(
      Object.keys(doc.paths)
        .filter((p: string) => p.startsWith("/api/v1"))
        .sort(),
    ).toEqual([
      "/api/v1/chat/completions",
      "/api/v1/models",
      "/api/v1/models/{model}",
      "/api/v1/responses",
      "/api/v1/responses/{response_id}",
      "/api/v1/responses/{response_id}/input_items",
    ]);
    // The reference at /api/docs reads that same document (pages/pages.test.ts).
    const docs = await fetch(`${server.baseUrl}/api/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('id="api-reference-configuration"');
  });

  it("serves the versioned API with the same auth rules", async () => {
    expect((await api("GET", "/api/v1/auth/profile/")).status).toBe(401);
    const response = await api("GET", "/api/v1/auth/profile/", { token: creator.access_token });
    expect(response.status).toBe(200);
    expect(response.body.user.email).toBe(creator.email);
  });
});

it("gives each new user a unique username even when the email local part repeats", async () => {
  const local = `same${Date.now().toString(36)}`;
  const a = await signUp(server.baseUrl, { email: `${local}@one.example.com` });
  const b = await signUp(server.baseUrl, { email: `${local}@two.example.com` });
  const pa = await api("POST", "/api/auth/login/", { token: a.access_token });
  const pb = await api("POST", "/api/auth/login/", { token: b.access_token });
  expect(pa.body.user.username).toBe(local);
  expect(pb.body.user.username).not.toBe(local);
  expect(pb.body.user.username.startsWith(local)).toBe(true);
  expect(uniqueEmail()).not.toBe(uniqueEmail());
});
