import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, expect, type Page, test } from "@playwright/test";
import { newPerson, signUp } from "./fixtures.ts";

// The official `openai` SDK, unchanged, in a page served from another origin: the CORS preflight
// lets its headers through, Chat Completions and Responses answer, and each call is paid once.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sdkDir = path.join(root, "node_modules/openai");
const PRICE_CENTS = 10;

let site: Server;
let siteOrigin: string;

test.beforeAll(async () => {
  // Another origin: the page and the SDK's own ES modules, as a bundler-free site would serve them.
  site = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://site");
    if (url.pathname === "/") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        '<!doctype html><title>Another site</title><main><p id="chat"></p><p id="responses"></p></main>',
      );
      return;
    }
    const file = path.join(sdkDir, path.normalize(url.pathname.replace(/^\/openai\//, "")));
    if (!url.pathname.startsWith("/openai/") || !file.startsWith(sdkDir)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { "content-type": "text/javascript" }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
});
test.afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

/** A signed-up person's page and an authenticated fetch of the API through it. */
async function personWithApi(browser: Browser) {
  const page = await (await browser.newContext()).newPage();
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const api = (method: string, url: string, body?: unknown) =>
    page.evaluate(
      async ({ method, url, body }) => {
        const stored = Object.keys(localStorage).find((key) => key.startsWith("oidc.user:")) ?? "";
        const token = JSON.parse(localStorage.getItem(stored) ?? "{}").access_token;
        const response = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body ? { "content-type": "application/json" } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: response.status, body: await response.json().catch(() => null) };
      },
      { method, url, body },
    );
  return { page, api };
}

/**
 * The consumer's money once their leases have closed (billing/call-payment/leases.ts: a lease idle for 2 s goes
 * back to the wallet and its calls are posted): later specs read the platform's figures, so this
 * one leaves nothing in flight.
 */
async function settledWalletMicros(api: Awaited<ReturnType<typeof personWithApi>>["api"]) {
  for (let attempt = 0; ; attempt++) {
    const { body } = await api("GET", "/api/wallet/");
    if (body.held_micros === 0 || attempt === 40) return body.balance_micros + body.held_micros;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test("the openai SDK on another origin calls an app with Chat Completions and Responses, paid once each", async ({
  browser,
  baseURL,
}) => {
  const creator = await personWithApi(browser);
  const created = await creator.api("POST", "/api/app/", {
    name: `Browser Haiku ${Date.now().toString(36)}`,
    interaction_mode: "chat",
    visibility: "public",
    price_cents: PRICE_CENTS,
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug;
  expect(
    (await creator.api("PATCH", `/api/app/${slug}/prompt/`, { model: "gpt-4-turbo", max_tokens: 64 })).status,
  ).toBe(200);
  expect((await creator.api("PATCH", `/api/app/${slug}/update_status/`, { status: "live" })).status).toBe(
    200,
  );

  const consumer = await personWithApi(browser);
  const intent = await consumer.api("POST", "/api/wallet/payment-intents/", { amount: 100, currency: "usd" });
  const paid = await consumer.api("POST", "/api/billing/sandbox/confirm/", {
    client_secret: intent.body.client_secret,
    card: { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" },
  });
  expect(paid.body.status).toBe("succeeded");
  const key = (await consumer.api("POST", "/api/keys/", { name: "browser" })).body.key as string;
  const before = await settledWalletMicros(consumer.api);

  const page: Page = await (await browser.newContext()).newPage();
  await page.goto(siteOrigin);
  // What the SDK sent: its x-stainless-* headers are not CORS-safelisted, so each call needed
  // the preflight to allow them.
  const sent: Record<string, string>[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().startsWith(`${baseURL}/api/v1/`))
      sent.push(request.headers());
  });
  await page.evaluate(
    async ({ key, baseURL, slug }) => {
      const { default: OpenAI } = await import("/openai/index.mjs" as string);
      const client = new OpenAI({
        apiKey: key,
        baseURL: `${baseURL}/api/v1`,
        dangerouslyAllowBrowser: true,
        maxRetries: 0,
      });
      const chat = await client.chat.completions.create({
        model: slug,
        messages: [{ role: "user", content: "A haiku about tea" }],
      });
      (document.getElementById("chat") as HTMLElement).textContent =
        `chat: ${chat.choices[0].message.content}`;
      const response = await client.responses.create({ model: slug, input: "A haiku about rain" });
      (document.getElementById("responses") as HTMLElement).textContent =
        `responses: ${response.output_text}`;
    },
    { key, baseURL: baseURL as string, slug },
  );
  await expect(page.locator("#chat")).toHaveText(/^chat: .+/);
  await expect(page.locator("#responses")).toHaveText(/^responses: .+/);
  expect(sent).toHaveLength(2);
  for (const headers of sent)
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(["x-stainless-lang", "x-stainless-os"]));
  // Two calls, two charges.
  expect(before - (await settledWalletMicros(consumer.api))).toBe(2 * PRICE_CENTS * 10_000);
});
