import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/use-test-server.ts";

// CORS as a browser-based MCP client needs it (MCP authorization 2025-11-25): each route's
// preflight and an actual answer, over real HTTP (the issuer's routes are answered by its Koa app).

const server = useTestServer();
const origin = "http://127.0.0.1:6274"; // where the MCP Inspector's web UI runs

const preflight = (path: string, method: string, headers: string) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });
const fromBrowser = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, { ...init, headers: { origin, ...(init.headers as object) } });

function expectOpen(response: Response, where: string) {
  expect(response.headers.get("access-control-allow-origin"), where).toBe("*");
  expect(response.headers.get("access-control-allow-credentials"), where).toBeNull();
  const exposed = String(response.headers.get("access-control-expose-headers"));
  for (const name of [
    "www-authenticate",
    "mcp-session-id",
    "mcp-protocol-version",
    "payment-required",
    "payment-response",
  ])
    expect(exposed, `${where} exposes ${name}`).toContain(name);
}

const MCP_REQUEST_HEADERS =
  "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id, payment-signature";

describe("CORS on the MCP endpoints", () => {
  for (const path of ["/api/app/some-app/mcp", "/api/v1/app/some-app/mcp", "/api/mcp", "/api/v1/mcp"]) {
    it(`${path}: preflight → 204 for any origin, MCP's headers allowed`, async () => {
      const response = await preflight(path, "POST", MCP_REQUEST_HEADERS);
      expect(response.status).toBe(204);
      expectOpen(response, path);
      expect(response.headers.get("access-control-allow-methods")).toMatch(/POST/);
      const allowed = String(response.headers.get("access-control-allow-headers"));
      for (const name of MCP_REQUEST_HEADERS.split(", ")) expect(allowed).toContain(name);
    });
  }

  it("preflight asking for headers of the client's own (Inspector custom headers, traceparent) → allowed too", async () => {
    for (const path of [
      "/api/app/some-app/mcp",
      "/.well-known/oauth-protected-resource/api/app/some-app/mcp",
      "/oidc/token",
    ]) {
      const response = await preflight(
        path,
        path.startsWith("/.well") ? "GET" : "POST",
        "mcp-protocol-version, traceparent, X-Custom-Auth",
      );
      expect(response.status).toBe(204);
      expectOpen(response, path);
      const allowed = String(response.headers.get("access-control-allow-headers")).split(", ");
      for (const name of ["authorization", "mcp-protocol-version", "traceparent", "x-custom-auth"])
        expect(allowed, `${path} allows ${name}`).toContain(name);
      expect(response.headers.get("vary")).toContain("access-control-request-headers");
    }
  });

  it("an unauthenticated call → 401 a browser can read, with its WWW-Authenticate challenge", async () => {
    const response = await fromBrowser("/api/app/some-app/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expectOpen(response, "401");
    expect(response.headers.get("www-authenticate")).toMatch(
      /resource_metadata="[^"]+\/api\/app\/some-app\/mcp"/,
    );
    expect(response.headers.get("www-authenticate")).toContain('scope="mcp"');
  });
});

describe("CORS on discovery, registration and tokens", () => {
  for (const path of [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/api/app/some-app/mcp",
    "/.well-known/oauth-authorization-server/oidc",
    "/.well-known/openid-configuration/oidc",
    "/oidc/.well-known/openid-configuration",
    "/oidc/jwks",
  ]) {
    it(`${path}: preflight and GET → open to any origin`, async () => {
      const before = await preflight(path, "GET", "mcp-protocol-version");
      expect(before.status).toBe(204);
      expectOpen(before, path);
      const response = await fromBrowser(path, { headers: { "mcp-protocol-version": "2025-11-25" } });
      expect(response.status).toBe(200);
      expectOpen(response, path);
    });
  }

  it("the protected resource metadata lists the MCP scope", async () => {
    const metadata = await (await fromBrowser("/.well-known/oauth-protected-resource/api/mcp")).json();
    expect(metadata.scopes_supported).toEqual(["mcp"]);
    expect(metadata.resource).toBe(`${server.baseUrl}/api/mcp`);
  });

  it("/oidc/reg: preflight → 204, registration from another origin → 201 it can read", async () => {
    const before = await preflight("/oidc/reg", "POST", "content-type");
    expect(before.status).toBe(204);
    expectOpen(before, "/oidc/reg");
    const response = await fromBrowser("/oidc/reg", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Browser Agent",
        redirect_uris: [`${origin}/oauth/callback`],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(response.status).toBe(201);
    expectOpen(response, "/oidc/reg");
    expect((await response.json()).client_id).toBeTruthy();
  });

  for (const path of ["/oidc/token", "/oidc/token/revocation"]) {
    it(`${path}: preflight → 204, a call from another origin → an OAuth answer it can read`, async () => {
      const before = await preflight(path, "POST", "content-type, authorization");
      expect(before.status).toBe(204);
      expectOpen(before, path);
      const response = await fromBrowser(path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "nope",
          client_id: "nobody",
          token: "x",
        }),
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expectOpen(response, path);
      expect((await response.json()).error).toBeTruthy();
    });
  }
});

describe("no permissive CORS where cookies or the management API answer", () => {
  for (const [path, method] of [
    ["/oidc/auth", "GET"],
    ["/oidc/interaction/some-uid", "GET"],
    ["/oidc/interaction/some-uid/consent", "POST"],
    ["/oidc/session/end", "GET"],
    ["/api/wallet/", "GET"],
    ["/api/keys/", "POST"],
  ] as const) {
    it(`${path}: no Access-Control-Allow-Origin, preflight or answer`, async () => {
      const before = await preflight(path, method, "content-type");
      expect(before.status, path).not.toBe(204);
      expect(before.headers.get("access-control-allow-origin"), path).toBeNull();
      const response = await fromBrowser(path, { redirect: "manual" });
      expect(response.headers.get("access-control-allow-origin"), path).toBeNull();
    });
  }
});
