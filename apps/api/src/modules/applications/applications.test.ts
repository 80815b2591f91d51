import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applications } from "../../db/schema/index.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { useCaller, useTestServer, withTestServer } from "../../test/use-test-server.ts";
import { slugify } from "./applications.service.ts";

const server = useTestServer();
const owner = useCaller(server, "Owner");
const stranger = useCaller(server, "Stranger");

describe("slugify", () => {
  it("lowercases, turns runs of other characters into one hyphen and trims hyphens", () => {
    expect(slugify("  My   Great App!! ")).toBe("my-great-app");
    expect(slugify("Café — Résumé Writer")).toBe("cafe-resume-writer");
    expect(slugify("!!!")).toBe("app");
  });
});

describe("creating and managing applications", () => {
  it("creates a prompt app with SPEC's defaults and a slug derived from the name", async () => {
    const response = await owner.api("POST", "/api/app/", { body: { name: "Blog Post Writer" } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: "Blog Post Writer",
      slug: "blog-post-writer",
      type: "prompt",
      interaction_mode: "completion",
      visibility: "private",
      status: "draft",
      price_cents: 100,
      provider_config: null,
      creator_name: "Owner",
    });
  });

  it("suffixes the slug on collision and refuses a taken explicit slug", async () => {
    const a = await owner.api("POST", "/api/app/", { body: { name: "Twin" } });
    const b = await stranger.api("POST", "/api/app/", { body: { name: "Twin" } });
    const c = await owner.api("POST", "/api/app/", { body: { name: "twin!" } });
    expect([a.body.slug, b.body.slug, c.body.slug]).toEqual(["twin", "twin-2", "twin-3"]);
    const explicit = await owner.api("POST", "/api/app/", { body: { name: "Other", slug: "twin" } });
    expect(explicit.status).toBe(409);
    expect(explicit.body.fields).toEqual({ slug: "is already taken" });
    const custom = await owner.api("POST", "/api/app/", { body: { name: "Other", slug: "my-custom-slug" } });
    expect(custom.body.slug).toBe("my-custom-slug");
  });

  it("refuses bad bodies with 400 naming the field", async () => {
    const cases: [object, string][] = [
      [{}, "name"],
      [{ name: "  " }, "name"],
      [{ name: "x", price_cents: 0 }, "price_cents"],
      [{ name: "x", price_cents: 1.5 }, "price_cents"],
      [{ name: "x", price_cents: "100" }, "price_cents"],
      [{ name: "x", visibility: "secret" }, "visibility"],
      [{ name: "x", owner_id: "someone" }, "owner_id"],
      [{ name: "x", slug: "Bad Slug" }, "slug"],
      [{ name: "x", type: "workflow" }, "provider_config.app_id"],
      [{ name: "x", provider_config: { app_id: "a", api_key: "k" } }, "provider_config"],
    ];
    for (const [body, field] of cases) {
      const response = await owner.api("POST", "/api/app/", { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(response.body.fields), JSON.stringify(body)).toContain(field);
    }
  });

  it("tells the starter model's lowest price and the guard's sentence for less", async () => {
    const starter = await owner.api("GET", "/api/prompt-apps/starter/");
    expect(starter.status).toBe(200);
    const floor = starter.body.min_price_cents as number;
    expect(starter.body).toMatchObject({ model: "gpt4", max_tokens: 1000, fee_percent: expect.any(Number) });
    expect(floor).toBeGreaterThan(1);
    const dollars = `$${Math.floor(floor / 100)}.${String(floor % 100).padStart(2, "0")}`;
    expect(starter.body.message).toMatch(
      new RegExp(
        `^At least ${floor} cents \\(\\${dollars}\\) a call covers its worst case \\(gpt4 with 1000 max tokens, \\$\\d+\\.\\d{4}\\) after the ${starter.body.fee_percent}% fee\\.$`,
      ),
    );
  });

  it("refuses creating a prompt app below the starter model's floor with the guard's sentence at price_cents", async () => {
    const starter = await owner.api("GET", "/api/prompt-apps/starter/");
    const floor = starter.body.min_price_cents as number;
    const below = await owner.api("POST", "/api/app/", {
      body: { name: "Too Cheap", price_cents: floor - 1 },
    });
    expect(below.status).toBe(400);
    expect(below.body).toMatchObject({
      code: "bad_request",
      status: 400,
      message: starter.body.message,
      fields: { price_cents: starter.body.message },
    });
    const mine = await owner.api("GET", "/api/app/");
    expect(mine.body.map((app: { name: string }) => app.name)).not.toContain("Too Cheap");
    const at = await owner.api("POST", "/api/app/", { body: { name: "Just Enough", price_cents: floor } });
    expect(at.status).toBe(201);
    expect(at.body.price_cents).toBe(floor);
    // The price-change path: lowering the new draft below its model's floor is the same 400.
    const lowered = await owner.api("PATCH", `/api/app/${at.body.slug}/`, {
      body: { price_cents: floor - 1 },
    });
    expect(lowered.status).toBe(400);
    expect(lowered.body.fields).toEqual({ price_cents: starter.body.message });
    // A workflow app has no starter model: its price is the creator's own business.
    const flow = await owner.api("POST", "/api/app/", {
      body: {
        name: "Cheap Flow",
        type: "workflow",
        price_cents: 1,
        provider_config: { app_id: "a", api_key: "k" },
      },
    });
    expect(flow.status).toBe(201);
  });

  it("encrypts a workflow app's provider key at rest and only ever returns it masked", async () => {
    const secret = "app-SUPERSECRET-1234";
    const created = await owner.api("POST", "/api/app/", {
      body: {
        name: "Dify Flow",
        type: "workflow",
        provider_config: { app_id: "dify-app-1", api_key: secret },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.provider_config).toEqual({ app_id: "dify-app-1", api_key: "••••1234" });
    const [row] = await server.database.db
      .select()
      .from(applications)
      .where(eq(applications.slug, created.body.slug));
    expect(JSON.stringify(row)).not.toContain("SUPERSECRET");
    expect(row?.providerApiKeyEncrypted).toMatch(/^v1\./);
    const listed = await owner.api("GET", "/api/app/");
    expect(JSON.stringify(listed.body)).not.toContain("SUPERSECRET");
  });

  it("patches, changes status, duplicates as a draft and deletes", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", {
      body: { name: "Lifecycle", interaction_mode: "chat" },
    });
    const patched = await owner.api("PATCH", `/api/app/${app.slug}/`, {
      body: { name: "Lifecycle 2", description: "Now better", visibility: "public", price_cents: 250 },
    });
    expect(patched.body).toMatchObject({
      name: "Lifecycle 2",
      slug: app.slug,
      description: "Now better",
      visibility: "public",
      price_cents: 250,
    });
    const slugChange = await owner.api("PATCH", `/api/app/${app.slug}/`, { body: { slug: "new-slug" } });
    expect(slugChange.status).toBe(400);
    expect(slugChange.body.fields).toEqual({ slug: "is not an allowed field" });

    const live = await owner.api("PATCH", `/api/app/${app.slug}/update_status/`, {
      body: { status: "live" },
    });
    expect(live.body.status).toBe("live");
    await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { prompt_template: "Chat about {{query}}" },
    });

    const copy = await owner.api("POST", `/api/app/${app.slug}/duplicate/`);
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({
      name: "Lifecycle 2 (copy)",
      status: "draft",
      interaction_mode: "chat",
      price_cents: 250,
    });
    expect(copy.body.slug).not.toBe(app.slug);
    const copiedPrompt = await owner.api("GET", `/api/app/${copy.body.slug}/prompt/`);
    expect(copiedPrompt.body.active_version.prompt_template).toBe("Chat about {{query}}");

    expect((await owner.api("DELETE", `/api/app/${app.slug}/`)).status).toBe(204);
    expect((await owner.api("GET", `/api/app/${app.slug}/`)).status).toBe(404);
    expect((await owner.api("GET", `/api/app/${copy.body.slug}/`)).status).toBe(200);
  });

  it("lists only the caller's own applications", async () => {
    const mine = await owner.api("GET", "/api/app/");
    const theirs = await stranger.api("GET", "/api/app/");
    const mySlugs = new Set(mine.body.map((a: { slug: string }) => a.slug));
    expect(theirs.body.length).toBeGreaterThan(0);
    expect(theirs.body.every((a: { slug: string }) => !mySlugs.has(a.slug))).toBe(true);
  });
});

describe("ownership", () => {
  it.each([
    ["prompt", { name: "Private Matters", visibility: "public" }],
    [
      "workflow",
      {
        name: "Private Flow",
        visibility: "public",
        type: "workflow",
        provider_config: { app_id: "a", api_key: "k-123456" },
      },
    ],
  ])(
    "answers 404 to another user on every management route of a %s application",
    async (_type, createBody) => {
      const { body: app } = await owner.api("POST", "/api/app/", { body: createBody });
      await owner.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
      const doc = (await owner.api("GET", "/api/openapi.json")).body as {
        paths: Record<string, Record<string, { tags?: string[] }>>;
      };
      const routes = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith("/api/app/{slug}"))
        .flatMap(([path, ops]) =>
          Object.entries(ops)
            // Calling a public app (Dify-style or as an MCP tool) is open to all; these are its management routes.
            .filter(([, op]) => !op.tags?.some((tag) => tag === "gateway" || tag === "mcp"))
            .map(([method]) => ({ method: method.toUpperCase(), path: path.replace("{slug}", app.slug) })),
        );
      expect(routes.length).toBeGreaterThanOrEqual(9);
      const bodies: Record<string, unknown> = {
        [`PATCH /api/app/${app.slug}/`]: { name: "Hijacked" },
        [`PATCH /api/app/${app.slug}/update_status/`]: { status: "archived" },
        [`PATCH /api/app/${app.slug}/prompt/`]: { prompt_template: "pwned" },
        [`PATCH /api/app/${app.slug}/prompt-application/`]: {
          application: { status: "archived" },
          prompt: { prompt_template: "pwned" },
        },
        [`POST /api/app/${app.slug}/prompt/test-config/`]: { prompt_template: "x" },
        [`PATCH /api/app/${app.slug}/workflow/`]: { timeout_seconds: 5 },
        [`POST /api/app/${app.slug}/workflow/test-config/`]: { provider_config: {} },
        [`PUT /api/app/${app.slug}/embed`]: { allowed_origins: ["https://evil.example"] },
      };
      const leaks: string[] = [];
      for (const route of routes) {
        const key = `${route.method} ${route.path}`;
        const response = await stranger.api(route.method, route.path, { body: bodies[key] });
        if (response.status !== 404)
          leaks.push(`${key}: ${response.status} ${JSON.stringify(response.body)}`);
      }
      expect(leaks).toEqual([]);
      const after = await owner.api("GET", `/api/app/${app.slug}/`);
      expect(after.body).toMatchObject({ name: createBody.name, status: "live" });
    },
  );
});

describe("file upload", () => {
  const upload = async (caller: Caller, slug: string, file: Blob, name: string, field = "file") => {
    const form = new FormData();
    form.append(field, file, name);
    const response = await fetch(`${server.baseUrl}/api/app/${slug}/file-upload/`, {
      method: "POST",
      headers: { authorization: `Bearer ${caller.token}` },
      body: form,
    });
    return { status: response.status, body: await response.json() };
  };

  it("stores an accepted file and refuses wrong types, fake content, empty files and other users", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Uploads" } });
    const ok = await upload(owner, app.slug, new Blob(["hello"], { type: "text/plain" }), "notes.txt");
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ name: "notes.txt", size: 5, mime_type: "text/plain", extension: "txt" });

    const exe = await upload(owner, app.slug, new Blob(["MZ..."]), "tool.exe");
    expect(exe.status).toBe(415);
    const fakePng = await upload(
      owner,
      app.slug,
      new Blob(["not really a png"], { type: "image/png" }),
      "pic.png",
    );
    expect(fakePng.status).toBe(415);
    expect(fakePng.body.message).toContain("not a .png file");
    const empty = await upload(owner, app.slug, new Blob([]), "empty.txt");
    expect(empty.status).toBe(400);
    const wrongField = await upload(owner, app.slug, new Blob(["x"]), "a.txt", "document");
    expect(wrongField.status).toBe(400);
    expect((await upload(stranger, app.slug, new Blob(["x"]), "a.txt")).status).toBe(404);
  });

  it("refuses a malformed multipart body with 400, not a 500 (found by fuzzing)", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Broken Uploads" } });
    const bodies = [
      '{"not":"multipart"}',
      '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello',
      "--x\r\nnot a header\r\n\r\n--x--",
    ];
    for (const body of bodies) {
      const response = await fetch(`${server.baseUrl}/api/app/${app.slug}/file-upload/`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.token}`,
          "content-type": "multipart/form-data; boundary=x",
        },
        body,
      });
      expect(response.status, body).toBeGreaterThanOrEqual(400);
      expect(response.status, body).toBeLessThan(500);
    }
  });

  it("refuses a file over the size limit with 413", async () => {
    await withTestServer({ env: { MAX_UPLOAD_BYTES: "2048" } }, async (limited) => {
      const person = await createCaller(limited.baseUrl);
      const { body: app } = await person.api("POST", "/api/app/", { body: { name: "Small" } });
      const form = new FormData();
      form.append("file", new Blob(["x".repeat(5000)]), "big.txt");
      const response = await fetch(`${limited.baseUrl}/api/app/${app.slug}/file-upload/`, {
        method: "POST",
        headers: { authorization: `Bearer ${person.token}` },
        body: form,
      });
      expect(response.status).toBe(413);
      expect((await response.json()).fields).toEqual({ file: "is too large" });
    });
  });
});

it("reports usage from recorded invocations", async () => {
  const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Counted" } });
  for (const query of ["a", "b"])
    await owner.api("POST", `/api/app/${app.slug}/completion-messages`, { body: { inputs: { query } } });
  const usage = await owner.api("GET", `/api/app/${app.slug}/analytics/usage/?days=30`);
  expect(usage.body).toMatchObject({ total_invocations: 2, total_revenue: 0 });
  expect((await owner.api("GET", `/api/app/${app.slug}/analytics/usage/?days=12`)).status).toBe(400);
});
