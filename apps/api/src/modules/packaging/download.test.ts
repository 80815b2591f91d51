import { describe, expect, it } from "vitest";
import { downloadAppPackage } from "../../test/app-package.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

const server = useTestServer();
const owner = useCaller(server, "Package Owner");
const stranger = useCaller(server, "Stranger");

async function promptApp(body: Record<string, unknown>): Promise<string> {
  const created = await owner.api("POST", "/api/app/", { body });
  expect(created.status).toBe(201);
  return created.body.slug;
}

const inputSchema = {
  type: "object",
  properties: {
    topic: { type: "string", description: "The tea to write about", maxLength: 80 },
    words: { type: "integer", default: 50 },
    tone: { type: "string", enum: ["calm", "lively"] },
    query: { type: "string" },
  },
  required: ["topic"],
  additionalProperties: false,
};

describe("download-frontend", () => {
  it("zips the completion app with the app's name, description and inputs, and no API key", async () => {
    const slug = await promptApp({ name: "Tea Writer", description: "Writes about any tea." });
    const patched = await owner.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "Write {{words}} words on {{topic}}, {{tone}}.", input_schema: inputSchema },
    });
    expect(patched.status).toBe(200);

    const zip = await downloadAppPackage(server.baseUrl, owner, slug);
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-disposition")).toBe(`attachment; filename="${slug}-completion-app.zip"`);
    const folder = `${slug}-completion-app`;
    expect(Object.keys(zip.files).sort()).toEqual(
      [
        ".env.example",
        ".gitignore",
        "README.md",
        "app.json",
        "package.json",
        "public/completion.js",
        "public/index.html",
        "public/promptmint.js",
        "public/style.css",
        "server.mjs",
      ].map((name) => `${folder}/${name}`),
    );

    const env = zip.files[`${folder}/.env.example`] ?? "";
    expect(env).toContain(`PROMPTMINT_BASE_URL=${server.baseUrl}\n`);
    expect(env).toContain(`PROMPTMINT_APP_SLUG=${slug}\n`);
    expect(env).toMatch(/^PROMPTMINT_API_KEY=$/m);
    expect(env).toContain("PORT=");
    expect(env).toMatch(/^HOST=127\.0\.0\.1$/m);
    expect(Object.values(zip.files).join("\n")).not.toMatch(/pm_[A-Za-z0-9]/);

    const { inputs, ...app } = JSON.parse(zip.files[`${folder}/app.json`] ?? "");
    expect(app).toEqual({
      name: "Tea Writer",
      description: "Writes about any tea.",
      slug,
      type: "completion",
      app_type: "prompt",
    });
    // PostgreSQL's jsonb keeps its own key order, so the fields are compared by name.
    expect(inputs.sort((a: any, b: any) => a.variable.localeCompare(b.variable))).toEqual([
      { variable: "query", label: "query", type: "string", required: false },
      { variable: "tone", label: "tone", type: "string", required: false, options: ["calm", "lively"] },
      { variable: "topic", label: "The tea to write about", type: "string", required: true, max_length: 80 },
      { variable: "words", label: "words", type: "integer", required: false, default: 50 },
    ]);
    const readme = zip.files[`${folder}/README.md`] ?? "";
    expect(readme.split("\n")[0]).toBe("# Tea Writer");
    expect(readme).toContain("Writes about any tea.");
    expect(readme).toContain("node server.mjs");
    expect(readme).not.toMatch(/\{\{\w+\}\}/);
  });

  it("gives a chat-mode prompt app the chat app, where query is the message box, unless asked otherwise", async () => {
    const slug = await promptApp({ name: "Tea Chat", interaction_mode: "chat" });

    const chat = await downloadAppPackage(server.baseUrl, owner, slug);
    expect(chat.headers.get("content-disposition")).toBe(`attachment; filename="${slug}-chat-app.zip"`);
    expect(chat.files[`${slug}-chat-app/public/chat.js`]).toContain("chat-messages");
    expect(chat.files[`${slug}-chat-app/public/completion.js`]).toBeUndefined();
    expect(JSON.parse(chat.files[`${slug}-chat-app/app.json`] ?? "")).toMatchObject({
      type: "chat",
      inputs: [],
    });

    const completion = await downloadAppPackage(server.baseUrl, owner, slug, "?type=completion");
    expect(completion.headers.get("content-disposition")).toBe(
      `attachment; filename="${slug}-completion-app.zip"`,
    );
    expect(JSON.parse(completion.files[`${slug}-completion-app/app.json`] ?? "").inputs).toEqual([
      { variable: "query", label: "What to ask", type: "string", required: true },
    ]);
  });

  it("gives a workflow app the completion app with one free-text input", async () => {
    const slug = await promptApp({
      name: "Support Flow",
      type: "workflow",
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    });
    const zip = await downloadAppPackage(server.baseUrl, owner, slug);
    expect(zip.headers.get("content-disposition")).toBe(`attachment; filename="${slug}-completion-app.zip"`);
    const files = Object.values(zip.files).join("\n");
    expect(files).not.toContain("app-dify-key-9999");
    expect(JSON.parse(zip.files[`${slug}-completion-app/app.json`] ?? "")).toMatchObject({
      type: "completion",
      app_type: "workflow",
      inputs: [{ variable: "query", label: "Query", type: "string", required: true }],
    });
  });

  it("refuses an unknown type with a 400 naming it", async () => {
    const slug = await promptApp({ name: "Typed" });
    const answer = await downloadAppPackage(server.baseUrl, owner, slug, "?type=workflow");
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "bad_request", status: 400 });
    expect(Object.keys(answer.body.fields)).toEqual(["type"]);
  });

  it("answers 404 to anyone but the owner, exactly as for a missing app, and 401 without a token", async () => {
    const slug = await promptApp({ name: "Mine Only", visibility: "public" });
    const foreign = await downloadAppPackage(server.baseUrl, stranger, slug);
    const missing = await downloadAppPackage(server.baseUrl, stranger, "no-such-app");
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.body.message).toBe("Application not found");
    expect((await downloadAppPackage(server.baseUrl, null, slug)).status).toBe(401);
  });
});
