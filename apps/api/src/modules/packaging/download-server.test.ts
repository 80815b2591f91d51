import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadAppPackage, writeAppPackage } from "../../test/app-package.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { freePort, startTestServer, type TestServer } from "../../test/server.ts";

let testDb: TestDatabase;
let server: TestServer;
let owner: Caller;
let workDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
  owner = await createCaller(server.baseUrl, "Package Owner");
  workDir = mkdtempSync(path.join(os.tmpdir(), "pm-package-"));
});
afterAll(async () => {
  for (const child of children) child.kill();
  await server?.stop();
  await testDb?.destroy();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** Starts the downloaded `server.mjs` as its own process; resolves with its URL once it listens. */
async function startAppServer(folder: string, env: Record<string, string> = {}): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ["server.mjs"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      if (output.includes("Listening on")) resolve();
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.once("exit", (code) => reject(new Error(`server.mjs exited with ${code}: ${output}`)));
  });
  return `http://127.0.0.1:${port}`;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the downloaded app's server.mjs", () => {
  let folder: string;
  let appUrl: string;

  beforeAll(async () => {
    const { body: app } = await owner.api("POST", "/api/app/", {
      body: { name: "Proxy Chat", interaction_mode: "chat" },
    });
    const zip = await downloadAppPackage(server.baseUrl, owner, app.slug);
    folder = writeAppPackage(zip.files, workDir);
    const { body: key } = await owner.api("POST", "/api/keys/", { body: { name: "downloaded app" } });
    const envExample = zip.files[`${path.basename(folder)}/.env.example`] ?? "";
    writeFileSync(
      path.join(folder, ".env"),
      envExample.replace(/^PROMPTMINT_API_KEY=$/m, `PROMPTMINT_API_KEY=${key.key}`),
    );
    appUrl = await startAppServer(folder);
  });

  it("serves the page and app.json, but never .env or the server's own files", async () => {
    const page = await fetch(appUrl);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('src="/chat.js"');
    expect(await (await fetch(`${appUrl}/app.json`)).json()).toMatchObject({
      name: "Proxy Chat",
      type: "chat",
    });
    for (const probe of [
      "/.env",
      "/%2e%2e/.env",
      "/..%2f.env",
      "/server.mjs",
      "/%2e%2e/server.mjs",
      "/%E0%A4%A",
    ]) {
      const answer = await fetch(`${appUrl}${probe}`);
      expect(answer.status, probe).toBe(404);
      expect(await answer.text(), probe).not.toContain("pm_");
    }
  });

  it("forwards a chat turn to Promptmint with the key it holds, and continues the conversation", async () => {
    const first = await post(`${appUrl}/api/chat-messages`, { query: "Hello there", inputs: {} });
    expect(first.status).toBe(200);
    const answer = await first.json();
    expect(answer.answer).toBe("[sandbox gpt-4-turbo] Hello there");
    expect(answer.conversation_id).toEqual(expect.any(String));

    const second = await post(`${appUrl}/api/chat-messages`, {
      query: "And again",
      inputs: {},
      conversation_id: answer.conversation_id,
    });
    expect((await second.json()).conversation_id).toBe(answer.conversation_id);

    const streamed = await post(`${appUrl}/api/chat-messages`, {
      query: "Stream it",
      inputs: {},
      response_mode: "streaming",
    });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const events = await streamed.text();
    expect(events).toContain('"event":"message"');
    expect(events).toContain('"event":"message_end"');

    const keys = await owner.api("GET", "/api/keys/");
    expect(keys.body.find((key: any) => key.name === "downloaded app").last_used_at).not.toBeNull();
  });

  it("passes Promptmint's errors through with their status, and refuses other paths", async () => {
    const invalid = await post(`${appUrl}/api/chat-messages`, { inputs: {} });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).message).toContain("query");
    expect((await fetch(`${appUrl}/api/keys`)).status).toBe(404);
  });

  it("lets the environment override .env: a wrong key is a 401, an unfunded one a 402, none a 503 naming it", async () => {
    const wrongKey = await startAppServer(folder, { PROMPTMINT_API_KEY: "pm_wrong" });
    const refused = await post(`${wrongKey}/api/chat-messages`, { query: "Hi", inputs: {} });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ status: 401 });

    // A consumer's key with an empty wallet, once the app is live and public.
    const slug = path.basename(folder).replace(/-chat-app$/, "");
    await owner.api("PATCH", `/api/app/${slug}/`, { body: { visibility: "public", status: "live" } });
    const consumer = await createCaller(server.baseUrl, "Consumer");
    const { body: consumerKey } = await consumer.api("POST", "/api/keys/", { body: { name: "broke" } });
    const broke = await startAppServer(folder, { PROMPTMINT_API_KEY: consumerKey.key });
    const unpaid = await post(`${broke}/api/chat-messages`, { query: "Hi", inputs: {} });
    expect(unpaid.status).toBe(402);
    expect(await unpaid.json()).toMatchObject({ code: "payment_required", status: 402 });

    const noKey = await startAppServer(folder, { PROMPTMINT_API_KEY: "" });
    const unconfigured = await post(`${noKey}/api/chat-messages`, { query: "Hi", inputs: {} });
    expect(unconfigured.status).toBe(503);
    expect((await unconfigured.json()).message).toContain("PROMPTMINT_API_KEY");
  });
});
