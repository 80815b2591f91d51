import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/use-test-server.ts";
import { PAGE_SHELL_CSS } from "./page-shell.ts";

const server = useTestServer();
const get = (path: string) => fetch(`${server.baseUrl}${path}`);

/** The `<script …>` opening tags of a page. */
const scriptTags = (html: string) => html.match(/<script\b[^>]*>/g) ?? [];

describe("the API reference at /api/docs", () => {
  it("is Promptmint's page under the strict CSP: scripts of this origin only, nothing from elsewhere", async () => {
    for (const path of ["/api/docs", "/api/docs/"]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      const csp = response.headers.get("content-security-policy") ?? "";
      const scriptSrc = csp.split(";").find((d) => d.trim().startsWith("script-src"));
      expect(scriptSrc?.trim()).toBe("script-src 'self'");
      expect(csp).toMatch(/connect-src 'self'(;|$)/);

      const html = await response.text();
      expect(html).toContain("<title>API reference · Promptmint</title>");
      expect(html).toMatch(/<a class="pm-back" href="\/dashboard">.*Back to Promptmint<\/a>/);
      expect(html).not.toMatch(/https?:\/\/|\/\/[a-z]/i);
      // Every script is a file of this origin or an inert JSON block: no inline code to allow.
      for (const tag of scriptTags(html)) expect(tag).toMatch(/ src="\/[^/]|type="application\/json"/);
      expect(html).not.toMatch(/\son[a-z]+=/i);
    }
  });

  it("serves Scalar's bundle and its start-up script from this server, cacheable", async () => {
    const html = await (await get("/api/docs")).text();
    const sources = scriptTags(html).flatMap((tag) => tag.match(/ src="([^"]+)"/)?.[1] ?? []);
    expect(sources).toEqual(["/pages/assets/api-reference.js", "/api/docs/js/scalar.js"]);
    for (const source of sources) {
      const script = await get(source);
      expect(script.status, source).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/javascript/);
      expect(script.headers.get("cache-control")).toBe("public, max-age=3600");
    }
    const bundle = await (await get("/api/docs/js/scalar.js")).text();
    expect(bundle.length).toBeGreaterThan(1_000_000);
    expect(bundle).toContain("createApiReference");
    const start = await (await get("/pages/assets/api-reference.js")).text();
    expect(start).toContain("createApiReference");

    const configuration = html.match(
      /<script id="api-reference-configuration" type="application\/json">(.*?)<\/script>/,
    )?.[1];
    expect(JSON.parse(configuration ?? "null")).toMatchObject({
      url: "/api/openapi.json",
      withDefaultFonts: false,
      telemetry: false,
    });
  });

  it("keeps /api/openapi.json as the document the reference reads, and no copy under /api/docs", async () => {
    const document = await get("/api/openapi.json");
    expect(document.status).toBe(200);
    expect((await document.json()).openapi).toBe("3.1.0");
    expect((await get("/api/docs/openapi.json")).status).toBe(404);
    expect((await get("/api/docs/json")).status).toBe(404);
  });
});

describe("the server-rendered pages' files", () => {
  it("serves the page shell's and the reference's stylesheets, and nothing else by name", async () => {
    for (const path of [PAGE_SHELL_CSS, "/pages/assets/api-reference.css"]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/css/);
      expect(await response.text()).toContain("#2563eb"); // the brand colour
    }
    expect((await get("/pages/assets/secrets.json")).status).toBe(404);
    expect((await get("/pages/assets/..%2Fpages.routes.ts")).status).toBe(404);
  });
});
