import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type APIRequestContext,
  type Browser,
  expect,
  type Page,
  type TestInfo,
  test,
} from "@playwright/test";
import { createApiKey, createLiveApp, newPerson, signUp } from "./fixtures.ts";

// Issue 41: the same release journey for a prompt app and a workflow app (decisions 075, 077, 079):
// a saved version with a change note, its diff, a guarded rollout that advances to production,
// and one that rolls back by itself on a margin breach, with what the pages say checked against
// the `promptmint-version` header of real paid calls. At a desktop's and a phone's width.
const PHONE = { width: 390, height: 760 };
const DESKTOP = { width: 1280, height: 800 };
const hooks: Server[] = [];
const hookUrls: string[] = [];

test.beforeAll(async () => {
  for (const name of ["first", "second"]) {
    const hook = createServer((request, response) => {
      request.resume();
      request.on("end", () =>
        response
          .writeHead(200, { "Content-Type": "application/json" })
          .end(JSON.stringify({ answer: `${name} hook`, usage: { input_tokens: 1, output_tokens: 2 } })),
      );
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    hooks.push(hook);
    hookUrls.push(`http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`);
  }
});

test.afterAll(async () => {
  for (const hook of hooks) await new Promise<void>((resolve) => hook.close(() => resolve()));
});

async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await testInfo.attach(name, { path, contentType: "image/png" });
}

/** A consumer with money in their wallet and an API key. */
async function fundedConsumer(browser: Browser) {
  const context = await browser.newContext({ viewport: DESKTOP });
  const consumer = await context.newPage();
  await signUp(consumer, newPerson());
  await expect(consumer).toHaveURL(/\/dashboard$/);
  const token = await consumer.evaluate(() => localStorage.getItem("token"));
  const headers = { authorization: `Bearer ${token}` };
  const intent = await consumer.request.post("/api/wallet/payment-intents/", {
    headers,
    data: { amount: 2000, currency: "usd" },
  });
  expect(intent.ok(), await intent.text()).toBe(true);
  const paid = await consumer.request.post("/api/billing/sandbox/confirm/", {
    headers,
    data: {
      client_secret: (await intent.json()).client_secret,
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
    },
  });
  expect(paid.ok(), await paid.text()).toBe(true);
  await consumer.goto("/api-keys");
  return { context, request: consumer.request, apiKey: await createApiKey(consumer, "Rollouts e2e") };
}

/** A paid call as the consumer's own code makes it: the version that answered. */
async function served(
  request: APIRequestContext,
  slug: string,
  apiKey: string,
  user: string,
): Promise<string> {
  const response = await request.post(`/api/app/${slug}/completion-messages`, {
    headers: { authorization: `Bearer ${apiKey}` },
    data: { inputs: {}, query: "hello", response_mode: "blocking", user },
  });
  expect(response.status(), await response.text()).toBe(200);
  return response.headers()["promptmint-version"] ?? "";
}

/** Distinct end users call until `candidate` answered `count` of them; answers every version served. */
async function callUntil(
  request: APIRequestContext,
  slug: string,
  apiKey: string,
  prefix: string,
  candidate: string,
  count: number,
): Promise<Set<string>> {
  const versions = new Set<string>();
  let hits = 0;
  for (let i = 0; i < 120 && hits < count; i++) {
    const version = await served(request, slug, apiKey, `${prefix}-${i}`);
    versions.add(version);
    if (version === candidate) hits += 1;
  }
  expect(hits, `${candidate} answered ${hits} of the calls`).toBe(count);
  return versions;
}

/** Saves the editor with a change note (the save dialog asks what changed). */
async function saveWithNote(page: Page, note: string) {
  await page.getByRole("button", { name: "Save Changes" }).click();
  const dialog = page.getByRole("dialog", { name: "Save a new version" });
  await dialog.getByLabel("What changed? (optional)").fill(note);
  await dialog.getByRole("button", { name: "Save version" }).click();
}

type Kind = "prompt" | "workflow";

/** A live app of the kind with production v{p} and a saved, unreleased v{p+1}; answers its slug and p. */
async function appWithCandidate(page: Page, kind: Kind): Promise<{ slug: string; production: number }> {
  if (kind === "prompt") {
    const slug = await createLiveApp(page, { name: `Rollout ${Date.now().toString(36)}`, priceCents: 40 });
    await page.goto(`/prompts/${slug}`);
    await page.getByRole("tab", { name: "Prompt Config" }).click();
    const system = page.getByRole("textbox", { name: "System Prompt", exact: true });
    await system.fill("Answer in one short sentence.");
    await saveWithNote(page, "Shorter answers");
    const banner = page.getByRole("region", { name: "Release" });
    const text = (await banner.textContent()) ?? "";
    const production = Number(/Callers get v(\d+)/.exec(text)?.[1]);
    expect(production).toBeGreaterThan(0);
    return { slug, production };
  }
  await page.goto("/applications/create?type=workflow");
  await page.getByLabel("Application Name").fill(`Flow ${Date.now().toString(36)}`);
  await page.getByLabel("Description").fill("A webhook behind a paid API.");
  await page.getByLabel("App ID").fill("flow-app");
  await page.getByLabel("API Key").fill("sk-flow-secret-1234");
  await page.getByLabel("Visibility").selectOption("public");
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page).toHaveURL(/\/applications\/[a-z0-9-]+$/);
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";
  await page.goto(`/workflows/${slug}`);
  const setEndpoint = async (url: string, note: string) => {
    await page.getByRole("tab", { name: "Provider Config" }).click();
    await page.getByLabel("Provider", { exact: true }).selectOption("webhook");
    await page.getByRole("textbox", { name: "Endpoint URL" }).fill(url);
    await saveWithNote(page, note);
  };
  await setEndpoint(hookUrls[0] ?? "", "The first webhook");
  await expect(page.getByText("Changes saved")).toBeVisible();
  await page.getByRole("tab", { name: "Basic Settings" }).click();
  await page.getByLabel("Status").selectOption("live");
  await page.getByLabel("Price per Call (cents)").fill("40");
  await saveWithNote(page, "");
  await expect(page.getByRole("main").locator("header").getByText("live", { exact: true })).toBeVisible();
  await page.getByRole("textbox", { name: "Endpoint URL" }).waitFor({ state: "detached" });
  await setEndpoint(hookUrls[1] ?? "", "The second webhook");
  await expect(page.getByText(/Changes saved as v3; callers get v2/)).toBeVisible();
  return { slug, production: 2 };
}

/** Opens the promote dialog of `version` on the Versions page and starts a guarded rollout. */
async function startRollout(page: Page, version: number, fill: Record<string, string>) {
  const row = page
    .getByRole("list", { name: "Versions" })
    .getByRole("listitem", { name: `Version ${version}` });
  await row.getByRole("button", { name: "Promote to production" }).click();
  const promote = page.getByRole("dialog", { name: `Promote v${version} to production?` });
  await promote.getByRole("button", { name: "Roll out gradually" }).click();
  const settings = page
    .getByRole("dialog")
    .filter({ has: page.getByRole("button", { name: "Start rollout" }) });
  for (const [label, value] of Object.entries(fill)) await settings.getByLabel(label).fill(value);
  await settings.getByRole("button", { name: "Start rollout" }).click();
  await expect(page.getByRole("region", { name: `Rolling out v${version}` })).toBeVisible();
}

for (const kind of ["prompt", "workflow"] as const) {
  test(`a ${kind} app: a saved version with its note and diff, a guarded rollout that advances, and one that rolls back by itself`, async ({
    page,
    browser,
  }, testInfo) => {
    test.setTimeout(300_000);
    await page.setViewportSize(DESKTOP);
    const consumer = await fundedConsumer(browser);
    await signUp(page, newPerson());
    await expect(page).toHaveURL(/\/dashboard$/);
    const { slug, production } = await appWithCandidate(page, kind);
    const candidate = production + 1;
    const [v, next] = [`v${production}`, `v${candidate}`];
    expect(await served(consumer.request, slug, consumer.apiKey, "before")).toBe(v);

    // Versions: the note and the diff of what changed.
    await page.goto(`/${kind}s/${slug}/versions`);
    const timeline = page.getByRole("list", { name: "Versions" });
    await expect(timeline.getByRole("listitem", { name: `Version ${candidate}` })).toContainText(
      kind === "prompt" ? "Shorter answers" : "The second webhook",
    );
    // The diff of production against the saved version: what changed between them.
    const compare = page.locator("#compare-versions");
    if (kind === "prompt") await expect(compare).toContainText("Answer in one short sentence.");
    else {
      await expect(compare).toContainText(hookUrls[0] ?? "");
      await expect(compare).toContainText(hookUrls[1] ?? "");
    }

    // A rollout within bounds: 50% of callers, then production after the creator's "Advance now".
    await startRollout(page, candidate, {
      [`Steps (% of callers on ${next})`]: "50, 100",
      "Minimum calls per step": "2",
      "Max error rate (%)": "50",
    });
    const release = page.getByRole("region", { name: "Release" });
    await expect(release).toContainText(`${v} 50% · ${next} 50%`);
    // What the page says is what callers get: every unpinned caller on one of the two arms.
    const split = await callUntil(consumer.request, slug, consumer.apiKey, "split", next, 2);
    for (const version of split) expect([v, next]).toContain(version);
    await screenshot(page, testInfo, `${kind}-rollout-1280`);
    await page.setViewportSize(PHONE);
    await expect(page.getByRole("region", { name: `Rolling out v${candidate}` })).toBeVisible();
    await screenshot(page, testInfo, `${kind}-rollout-390`);
    await page.goto(`/${kind}s/${slug}/experiments`);
    await expect(page.getByRole("table").first()).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, "the page does not scroll sideways at 390 px").toBeLessThanOrEqual(1);
    await screenshot(page, testInfo, `${kind}-arms-390`);
    await page.setViewportSize(DESKTOP);
    await page.goto(`/${kind}s/${slug}/versions`);
    const card = page.getByRole("region", { name: `Rolling out v${candidate}` });
    await card.getByRole("button", { name: "Advance now" }).click();
    await expect(page.getByText(`${next} is in production`)).toBeVisible();
    await expect(release).toContainText(`Callers get ${next}`);
    for (let i = 0; i < 4; i++)
      expect(await served(consumer.request, slug, consumer.apiKey, `after-${i}`)).toBe(next);

    // A second candidate whose margin per call cannot reach its bound: rolled back by the stepper.
    // The prompt app's journey takes it here; a workflow app's breach rollback is the API test's
    // (rollouts-workflows.test.ts), its browser journey ends at the advance.
    if (kind === "prompt") {
      await page.goto(`/prompts/${slug}`);
      await page.getByRole("tab", { name: "Prompt Config" }).click();
      await page
        .getByRole("textbox", { name: "System Prompt", exact: true })
        .fill("Answer in two sentences.");
      await saveWithNote(page, "A dearer candidate");
      const third = candidate + 1;
      await page.goto(`/${kind}s/${slug}/versions`);
      await startRollout(page, third, {
        [`Steps (% of callers on v${third})`]: "50, 100",
        "Minimum calls per step": "2",
        // Above the 40¢ price: no call can keep this margin.
        "Min margin per call ($)": "1",
      });
      await callUntil(consumer.request, slug, consumer.apiKey, "dear", `v${third}`, 2);
      // The stepper job (every 30 s on every process) judges the step without waiting for its time.
      await page.goto(`/${kind}s/${slug}/experiments`);
      await expect(async () => {
        await page.reload();
        await expect(page.getByText("Rolled back", { exact: true }).first()).toBeVisible({ timeout: 5_000 });
      }).toPass({ timeout: 120_000, intervals: [3_000] });
      await page.goto(`/${kind}s/${slug}/versions`);
      await expect(page.getByRole("list", { name: "Versions" })).toBeVisible();
      await expect(page.getByRole("region", { name: "Release" })).toContainText(`Callers get ${next}`);
      await expect(page.getByRole("region", { name: `Rolling out v${third}` })).toHaveCount(0);
      for (let i = 0; i < 4; i++)
        expect(await served(consumer.request, slug, consumer.apiKey, `dear-after-${i}`)).toBe(next);
      await page.goto(`/${kind}s/${slug}/experiments`);
      await expect(page.getByText(/margin per call/).first()).toBeVisible();
      await screenshot(page, testInfo, `${kind}-rolled-back-1280`);
      await page.setViewportSize(PHONE);
      await screenshot(page, testInfo, `${kind}-rolled-back-390`);
    }
    await consumer.context.close();
  });
}
