import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadAppPackage, writeAppPackage } from "../../test/app-package.ts";
import { createCaller } from "../../test/caller.ts";
import { freePort } from "../../test/server.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

const server = useTestServer();
const owner = useCaller(server, "Package Owner");
let workDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "pm-package-"));
});
afterAll(async () => {
  for (const child of children) child.kill();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** Starts the downloaded `server.mjs` as its own process; resolves with its URL once it listens. */
async function startAppServer(
  folder: string,
  env: Record<string, string> = {},
  port?: number,
): Promise<string> {
  port ??= await freePort();
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
    expect(answer.answer).toBe("[sandbox gpt4] Hello there");
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

/** A stand-in for Promptmint that counts what reaches it. */
async function startCountingUpstream() {
  const received: string[] = [];
  const upstream = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ answer: "ok" }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  return { received, url: `http://127.0.0.1:${port}`, close: () => upstream.close() };
}

/** A raw HTTP request, so tests can send what browsers send (Host, Origin, Sec-Fetch-*). */
function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; host?: string } = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = http.request(
      {
        host: options.host ?? target.hostname,
        port: target.port,
        path: target.pathname,
        method: options.method ?? "POST",
        headers: options.headers,
      },
      (response) => {
        let body = "";
        response.on("data", (chunk) => {
          body += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

/** An address of this machine other than loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;
}

describe("server.mjs guarding the owner's key", () => {
  let folder: string;
  let upstream: Awaited<ReturnType<typeof startCountingUpstream>>;
  const configured = () => ({
    PROMPTMINT_BASE_URL: upstream.url,
    PROMPTMINT_APP_SLUG: "guarded",
    PROMPTMINT_API_KEY: "pm_guarded_test_key",
  });

  beforeAll(async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Guarded Chat" } });
    const zip = await downloadAppPackage(server.baseUrl, owner, app.slug);
    folder = writeAppPackage(zip.files, mkdtempSync(path.join(workDir, "guarded-")));
    upstream = await startCountingUpstream();
  });
  afterAll(() => upstream?.close());

  it("refuses cross-site and no-cors posts and non-JSON bodies before they reach Promptmint", async () => {
    const appUrl = await startAppServer(folder, configured());
    const endpoint = `${appUrl}/api/completion-messages`;
    const body = JSON.stringify({ inputs: { query: "spend it" } });
    const attempts: Record<string, string>[] = [
      // What <form> or fetch(..., {mode: "no-cors"}) on another site sends.
      {
        "content-type": "text/plain",
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "no-cors",
      },
      { "content-type": "application/json", origin: "https://evil.example" },
      { "content-type": "application/json", "sec-fetch-site": "same-site" },
      { "content-type": "application/json", origin: "null" },
    ];
    for (const headers of attempts) {
      const answer = await rawRequest(endpoint, { headers, body });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(answer.body).message).toMatch(/Cross-site requests are not forwarded/);
    }
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]) {
      const answer = await rawRequest(endpoint, { headers: { "content-type": type }, body });
      expect(answer.status, type).toBe(415);
    }
    // A site whose name resolves to 127.0.0.1 (DNS rebinding) is not this page either.
    const port = new URL(appUrl).port;
    const rebound = await rawRequest(endpoint, {
      headers: {
        "content-type": "application/json",
        host: `evil.example:${port}`,
        origin: `http://evil.example:${port}`,
      },
      body,
    });
    expect(rebound.status).toBe(403);
    expect(upstream.received).toEqual([]);

    // Its own page's call goes through.
    const own = await rawRequest(endpoint, {
      headers: {
        "content-type": "application/json",
        origin: `http://localhost:${port}`,
        host: `localhost:${port}`,
        "sec-fetch-site": "same-origin",
      },
      body,
    });
    expect(own.status).toBe(200);
    expect(upstream.received).toEqual(["POST /api/app/guarded/completion-messages"]);
  });

  it("rate-limits each visitor address with 429 and Retry-After", async () => {
    upstream.received.length = 0;
    const appUrl = await startAppServer(folder, { ...configured(), RATE_LIMIT_PER_MINUTE: "3" });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 5; i++) {
      const answer = await post(`${appUrl}/api/completion-messages`, { inputs: { query: `call ${i}` } });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get("retry-after");
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(upstream.received).toHaveLength(3);
  });

  it("listens on 127.0.0.1 only unless HOST says otherwise", async () => {
    const port = await freePort();
    await startAppServer(folder, configured(), port);
    expect((await fetch(`http://127.0.0.1:${port}/app.json`)).status).toBe(200);
    const address = externalAddress();
    expect(address, "this test needs a network interface besides loopback").toBeDefined();
    await expect(fetch(`http://${address}:${port}/app.json`)).rejects.toThrow();
    const everywhere = await freePort();
    await startAppServer(folder, { ...configured(), HOST: "0.0.0.0" }, everywhere);
    expect((await fetch(`http://${address}:${everywhere}/app.json`)).status).toBe(200);
  });
});
