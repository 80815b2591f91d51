import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { beforeAll, describe, expect, it } from "vitest";
import { EMBEDDED_SPA_CLIENT_ID } from "../../config.ts";
import { answerAuthorization, MemoryOAuthProvider } from "../../test/mcp-oauth.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

let slug: string;
let otherSlug: string;
const redirectUrl = "http://127.0.0.1:9/callback";

// More registrations than one address may make in 10 minutes by default (each test registers).
const server = useTestServer({ env: { OIDC_REGISTRATIONS_PER_IP: "50" } });
const creator = useCaller(server, "MCP Creator");

beforeAll(async () => {
  for (const name of ["Alpha Tool", "Beta Tool"]) {
    const { body } = await creator.api("POST", "/api/app/", { body: { name, visibility: "public" } });
    await creator.api("PATCH", `/api/app/${body.slug}/update_status/`, { body: { status: "live" } });
    if (slug) otherSlug = body.slug;
    else slug = body.slug;
  }
});

const mcpCall = (path: string, authorization?: string) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

const register = (metadata: Record<string, unknown>) =>
  fetch(`${server.baseUrl}/oidc/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token_endpoint_auth_method: "none", client_name: "Probe", ...metadata }),
  });

/** Runs the SDK's OAuth flow for an app's MCP endpoint up to the consent decision. */
async function authorize(target: string, decision: "allow" | "deny") {
  const provider = new MemoryOAuthProvider(redirectUrl);
  const serverUrl = new URL(`${server.baseUrl}/api/app/${target}/mcp`);
  await auth(provider, { serverUrl });
  const { callback } = await answerAuthorization(provider.authorizationUrl as URL, {
    email: creator.email,
    password: "correct-horse-7",
    redirectUrl,
    decision,
  });
  return { provider, serverUrl, callback };
}

describe("MCP authorization", () => {
  it("answers 401 with a challenge naming the endpoint's resource metadata", async () => {
    const response = await mcpCall(`/api/app/${slug}/mcp`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource/api/app/${slug}/mcp", scope="mcp"`,
    );
    const bad = await mcpCall("/api/mcp", "Bearer not-a-token");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource/api/mcp", scope="mcp"`,
    );
  });

  it("the agents' x402 endpoints, with x402 off → refused 404 (no anonymous MCP at all)", async () => {
    for (const path of [
      `/api/v1/agents/app/${slug}/mcp`,
      "/api/v1/agents/mcp",
      `/api/agents/app/${slug}/mcp`,
    ]) {
      const response = await mcpCall(path);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.headers.get("payment-required")).toBeNull();
    }
  });

  it("publishes protected resource metadata for each endpoint and the issuer's metadata at the root", async () => {
    const read = async (path: string) => (await fetch(`${server.baseUrl}${path}`)).json();
    const issuer = `${server.baseUrl}/oidc`;
    expect(await read(`/.well-known/oauth-protected-resource/api/app/${slug}/mcp`)).toMatchObject({
      resource: `${server.baseUrl}/api/app/${slug}/mcp`,
      authorization_servers: [issuer],
      scopes_supported: ["mcp"],
      bearer_methods_supported: ["header"],
    });
    expect(await read("/.well-known/oauth-protected-resource/api/mcp")).toMatchObject({
      resource: `${server.baseUrl}/api/mcp`,
    });
    expect(await read("/.well-known/oauth-protected-resource")).toMatchObject({
      resource: `${server.baseUrl}/api/mcp`,
    });
    expect(await read("/.well-known/oauth-authorization-server/oidc")).toMatchObject({
      issuer,
      registration_endpoint: `${issuer}/reg`,
      token_endpoint: `${issuer}/token`,
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("reads bodies past the public limit once the caller is known (long tool arguments)", async () => {
    const key = (await creator.api("POST", "/api/keys/", { body: { name: "long" } })).body.key;
    const response = await fetch(`${server.baseUrl}/api/app/${slug}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { pad: "x".repeat(64_000) } },
      }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).result.tools[0].name).toBe(slug);
  });

  it("refuses GET and DELETE: the server is stateless", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${server.baseUrl}/api/app/${slug}/mcp`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });

  it("registers public clients with https or loopback redirect URIs, never the SPA's", async () => {
    const good = await register({ redirect_uris: ["http://localhost:33418/cb", "https://agent.example/cb"] });
    expect(good.status).toBe(201);
    for (const uri of ["http://agent.example/cb", `${server.baseUrl}/auth/callback`, "javascript:alert(1)"]) {
      const refused = await register({ redirect_uris: [uri] });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_redirect_uri" });
    }
    const squatter = await register({ client_id: EMBEDDED_SPA_CLIENT_ID, redirect_uris: [redirectUrl] });
    expect((await squatter.json()).client_id).not.toBe(EMBEDDED_SPA_CLIENT_ID);
  });

  it("gives no token when the user denies consent", async () => {
    const { provider, callback } = await authorize(slug, "deny");
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("code")).toBeNull();
    expect(provider.saved).toBeUndefined();
  });

  it("issues a token good at its MCP endpoint only", async () => {
    const { provider, serverUrl, callback } = await authorize(slug, "allow");
    await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get("code") as string });
    const token = `Bearer ${provider.saved?.access_token}`;
    expect((await mcpCall(`/api/app/${slug}/mcp`, token)).status).toBe(200);
    expect((await mcpCall(`/api/app/${otherSlug}/mcp`, token)).status).toBe(401);
    expect((await mcpCall("/api/mcp", token)).status).toBe(401);
    expect((await creator.api("GET", "/api/wallet/", { auth: provider.saved?.access_token })).status).toBe(
      401,
    );
  });

  it("refuses a registered client a token for the whole API", async () => {
    const provider = new MemoryOAuthProvider(redirectUrl);
    await auth(provider, { serverUrl: new URL(`${server.baseUrl}/api/app/${slug}/mcp`) });
    const authorizationUrl = new URL(String(provider.authorizationUrl));
    authorizationUrl.searchParams.set("resource", `${server.baseUrl}/api`);
    const response = await fetch(authorizationUrl, { redirect: "manual" });
    const location = new URL(String(response.headers.get("location")), server.baseUrl);
    expect(location.toString().startsWith(redirectUrl)).toBe(true);
    expect(location.searchParams.get("error")).toBe("invalid_target");
  });

  it("a desktop client's loopback registration signs in from another port (RFC 8252 §7.3) → works", async () => {
    // The SDK registers without application_type; the client keeps its registration and, on a
    // later run, listens on whatever port is free.
    const first = new MemoryOAuthProvider("http://127.0.0.1:8931/callback");
    const serverUrl = new URL(`${server.baseUrl}/api/app/${slug}/mcp`);
    await auth(first, { serverUrl });
    expect(first.information?.client_id).toBeTruthy();
    const laterRedirect = "http://127.0.0.1:43123/callback";
    const later = new MemoryOAuthProvider(laterRedirect);
    later.information = first.information;
    await auth(later, { serverUrl });
    expect(later.authorizationUrl?.searchParams.get("redirect_uri")).toBe(laterRedirect);
    const { callback } = await answerAuthorization(later.authorizationUrl as URL, {
      email: creator.email,
      password: "correct-horse-7",
      redirectUrl: laterRedirect,
      decision: "allow",
    });
    await auth(later, { serverUrl, authorizationCode: callback.searchParams.get("code") as string });
    expect((await mcpCall(`/api/app/${slug}/mcp`, `Bearer ${later.saved?.access_token}`)).status).toBe(200);
  });

  it("a web client's https redirect on another port, or another loopback path → refused", async () => {
    const web = await (await register({ redirect_uris: ["https://agent.example/cb"] })).json();
    const registered = await register({ redirect_uris: ["http://127.0.0.1/cb"] });
    const loopback = await registered.json();
    expect(registered.status, JSON.stringify(loopback)).toBe(201);
    expect(loopback.application_type).toBe("native");
    for (const [client, redirect] of [
      [web.client_id, "https://agent.example:8443/cb"],
      [loopback.client_id, "http://127.0.0.1:43123/elsewhere"],
      [loopback.client_id, "http://evil.example:43123/cb"],
    ]) {
      const query = new URLSearchParams({
        client_id: client,
        redirect_uri: redirect,
        response_type: "code",
        scope: "mcp",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        resource: `${server.baseUrl}/api/app/${slug}/mcp`,
      });
      const response = await fetch(`${server.baseUrl}/oidc/auth?${query}`, { redirect: "manual" });
      expect(response.status, redirect).toBe(400);
      expect(response.headers.get("location"), redirect).toBeNull();
    }
  });
});
