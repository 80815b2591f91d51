import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../app.ts";
import { loadConfig } from "../config.ts";
import { contentSecurityPolicy } from "../lib/security-headers.ts";
import { startSignIn } from "../test/oidc-client.ts";
import { useCaller, useTestServer } from "../test/use-test-server.ts";

const server = useTestServer();
const creator = useCaller(server, "Headers Creator");
let slug: string;
/** A second app on the same database, behind https, with an embed-like route added. */
let httpsApp: FastifyInstance;

beforeAll(async () => {
  const created = await creator.api("POST", "/api/app/", {
    body: { name: "Headers app", interaction_mode: "completion", visibility: "public" },
  });
  slug = created.body.slug;
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { model: "gpt-4-turbo", prompt_template: "Say hello", changelog: "setup" },
  });
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });

  httpsApp = await buildApp({
    config: loadConfig({
      NODE_ENV: "test",
      PUBLIC_URL: "https://promptmint.example",
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "pm-data-")),
      SECRET_KEY: "test-secret-key-that-is-long-enough-0123456789",
      LOG_LEVEL: "silent",
    }),
    database: server.database,
    serveWeb: false,
  });
  httpsApp.get(
    "/embed/demo",
    { config: { frameAncestors: ["https://shop.example"], cors: true } },
    async () => ({
      ok: true,
    }),
  );
  httpsApp.get("/embed/own-policy", async (_request, reply) =>
    reply.header("content-security-policy", "frame-ancestors https://own.example").send({ ok: true }),
  );
  await httpsApp.ready();
});
afterAll(async () => {
  await httpsApp?.close();
});

function expectBaseline(headers: Headers, where: string) {
  const csp = headers.get("content-security-policy") ?? "";
  const scriptSrc = csp.split(";").find((d) => d.trim().startsWith("script-src")) ?? "";
  expect(scriptSrc, where).toMatch(/'self'/);
  expect(scriptSrc, where).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(csp, where).toMatch(/frame-ancestors 'none'/);
  expect(csp, where).toMatch(/object-src 'none'/);
  expect(headers.get("x-content-type-options"), where).toBe("nosniff");
  expect(headers.get("referrer-policy"), where).toBe("strict-origin-when-cross-origin");
  expect(headers.get("strict-transport-security"), `${where} is plain http`).toBeNull();
}

describe("security headers", () => {
  it("are on every kind of response: API, errors, issuer, sign-in page, docs, health, streams", async () => {
    const get = (p: string, init: RequestInit = {}) => fetch(`${server.baseUrl}${p}`, init);
    const journey = await startSignIn(server.baseUrl);
    const signInPage = await get(new URL(journey.page.url).pathname, {
      headers: { cookie: "" },
    });
    const responses: [string, Response][] = [
      ["GET /api/config", await get("/api/config")],
      ["GET /api/keys/ without a token", await get("/api/keys/")],
      ["unknown route", await get("/api/nope")],
      ["GET /healthz", await get("/healthz")],
      ["issuer discovery", await get("/oidc/.well-known/openid-configuration")],
      ["sign-in page (expired session)", signInPage],
      ["API docs", await get("/api/docs")],
      ["API docs' script", await get("/api/docs/js/scalar.js")],
      [
        "gateway stream",
        await get(`/api/app/${slug}/completion-messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${creator.token}`, "content-type": "application/json" },
          body: JSON.stringify({ inputs: { query: "hi" }, response_mode: "streaming" }),
        }),
      ],
    ];
    for (const [where, response] of responses) {
      await response.arrayBuffer();
      expectBaseline(response.headers, where);
    }
    expect(responses.at(-1)?.[1].headers.get("content-type")).toMatch(/event-stream/);
  });

  it("sends HSTS only behind TLS: a trusted proxy's X-Forwarded-Proto, or an https PUBLIC_URL", async () => {
    const viaProxy = await server.app.inject({
      url: "/api/config",
      headers: { "x-forwarded-proto": "https" },
    });
    expect(viaProxy.headers["strict-transport-security"]).toMatch(/max-age=31536000/);
    const spoofed = await server.app.inject({
      url: "/api/config",
      remoteAddress: "192.0.2.10",
      headers: { "x-forwarded-proto": "https" },
    });
    expect(spoofed.headers["strict-transport-security"]).toBeUndefined();
    const plain = await server.app.inject({ url: "/api/config" });
    expect(plain.headers["strict-transport-security"]).toBeUndefined();
    const publicHttps = await httpsApp.inject({ url: "/api/config" });
    expect(publicHttps.headers["strict-transport-security"]).toMatch(/max-age=31536000/);
  });

  it("lets a route be framed by the origins it names, or keep a policy it sets itself", async () => {
    const embed = await httpsApp.inject({ url: "/embed/demo", headers: { origin: "https://shop.example" } });
    expect(embed.headers["content-security-policy"]).toMatch(/frame-ancestors https:\/\/shop\.example$/);
    expect(embed.headers["content-security-policy"]).toMatch(/script-src 'self'/);
    expect(embed.headers["access-control-allow-origin"]).toBe("*");
    const own = await httpsApp.inject({ url: "/embed/own-policy" });
    expect(own.headers["content-security-policy"]).toBe("frame-ancestors https://own.example");
    const preflight = await httpsApp.inject({
      method: "OPTIONS",
      url: "/embed/demo",
      headers: { origin: "https://shop.example", "access-control-request-method": "GET" },
    });
    expect(preflight.statusCode).toBe(204);
  });
});

describe("the Content-Security-Policy", () => {
  it("adds Stripe.js and an external issuer only when configured, and never inline script", () => {
    const base = {
      NODE_ENV: "test",
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "pm-data-")),
      SECRET_KEY: "test-secret-key-that-is-long-enough-0123456789",
    };
    const plain = contentSecurityPolicy(loadConfig(base));
    expect(plain).toContain("script-src 'self';");
    expect(plain).toContain("connect-src 'self';");
    expect(plain).not.toContain("stripe");
    const configured = contentSecurityPolicy(
      loadConfig({
        ...base,
        STRIPE_SECRET_KEY: "sk_test_x",
        STRIPE_PUBLISHABLE_KEY: "pk_test_x",
        OIDC_ISSUER: "https://id.example.com/tenant/",
        OIDC_CLIENT_ID: "spa",
      }),
    );
    expect(configured).toMatch(/script-src 'self' https:\/\/js\.stripe\.com https:\/\/\*\.js\.stripe\.com;/);
    expect(configured).toMatch(/connect-src 'self' https:\/\/id\.example\.com https:\/\/api\.stripe\.com;/);
    const scriptSrc = configured.split("; ").find((directive) => directive.startsWith("script-src"));
    expect(scriptSrc).not.toMatch(/unsafe/);
  });
});

describe("CORS", () => {
  const origin = "https://someone-else.example";
  const preflight = (url: string, method = "POST") =>
    server.app.inject({
      method: "OPTIONS",
      url,
      headers: {
        origin,
        "access-control-request-method": method,
        "access-control-request-headers": "authorization, content-type",
      },
    });

  it("answers preflights on the gateway routes, Dify-style and OpenAI-style, under /api and /api/v1", async () => {
    for (const url of [
      `/api/app/${slug}/completion-messages`,
      `/api/v1/app/${slug}/chat-messages`,
      `/api/app/${slug}/parameters`,
      "/api/v1/chat/completions",
      "/api/v1/models",
    ]) {
      const response = await preflight(url);
      expect(response.statusCode, url).toBe(204);
      expect(response.headers["access-control-allow-origin"], url).toBe("*");
      expect(String(response.headers["access-control-allow-headers"]), url).toMatch(/authorization/);
    }
    const call = await server.app.inject({
      method: "POST",
      url: `/api/app/${slug}/completion-messages`,
      headers: { origin, authorization: `Bearer ${creator.token}`, "content-type": "application/json" },
      payload: { inputs: { query: "hi" } },
    });
    expect(call.statusCode, call.body).toBe(200);
    expect(call.headers["access-control-allow-origin"]).toBe("*");
    expect(String(call.headers["access-control-expose-headers"])).toMatch(/ratelimit-remaining/);
    const refused = await server.app.inject({
      method: "POST",
      url: "/api/v1/chat/completions",
      headers: { origin, authorization: "Bearer pm_wrong", "content-type": "application/json" },
      payload: { model: slug, messages: [{ role: "user", content: "hi" }] },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["access-control-allow-origin"]).toBe("*");
  });

  it("gives the management API no CORS at all, preflight or response", async () => {
    for (const [url, method] of [
      ["/api/app/", "POST"],
      [`/api/app/${slug}/`, "PATCH"],
      [`/api/app/${slug}/workflow/`, "PATCH"],
      ["/api/keys/", "POST"],
      ["/api/wallet/", "GET"],
      ["/api/v1/keys/", "POST"],
      ["/oidc/interaction/x/login", "POST"],
    ] as const) {
      const response = await preflight(url, method);
      expect(response.statusCode, url).not.toBe(204);
      expect(response.headers["access-control-allow-origin"], url).toBeUndefined();
    }
    const keys = await server.app.inject({
      url: "/api/keys/",
      headers: { origin, authorization: `Bearer ${creator.token}` },
    });
    expect(keys.statusCode).toBe(200);
    expect(keys.headers["access-control-allow-origin"]).toBeUndefined();
  });
});
