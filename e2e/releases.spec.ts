import {
  type APIRequestContext,
  type Browser,
  expect,
  type Locator,
  type Page,
  test,
} from "@playwright/test";
import { createApiKey, createLiveApp, newPerson, signUp } from "./fixtures.ts";

// Issue 31: editing a live app changes nothing for its callers until the creator promotes the
// new version; a rollback is one click. At a desktop's and a phone's width.
const PHONE = { width: 390, height: 705 };
const DESKTOP = { width: 1280, height: 800 };

async function bearer(page: Page): Promise<Record<string, string>> {
  const token = await page.evaluate(() => localStorage.getItem("token"));
  return { authorization: `Bearer ${token}` };
}

/** A consumer's paid call with their API key, as their own code would make it: the version that answered. */
async function servedVersion(
  request: APIRequestContext,
  slug: string,
  apiKey: string,
  user = "e2e-consumer",
): Promise<string> {
  const response = await request.post(`/api/app/${slug}/completion-messages`, {
    headers: { authorization: `Bearer ${apiKey}` },
    data: { inputs: {}, query: "hello", response_mode: "blocking", user },
  });
  expect(response.status(), await response.text()).toBe(200);
  return response.headers()["promptmint-version"] ?? "";
}

/** A consumer with money in their wallet and an API key, in a browser context of their own. */
async function fundedConsumer(browser: Browser) {
  const consumerContext = await browser.newContext({ viewport: DESKTOP });
  const consumer = await consumerContext.newPage();
  await signUp(consumer, newPerson());
  await expect(consumer).toHaveURL(/\/dashboard$/);
  const headers = await bearer(consumer);
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
  const apiKey = await createApiKey(consumer, "Releases e2e");
  return { consumer, consumerContext, apiKey };
}

/** Each timeline row's buttons (its label chips' aside) sit on one line. */
async function expectRowButtonsOnOneLine(timeline: Locator) {
  for (const row of await timeline.getByRole("listitem").all()) {
    const tops = await row
      .getByRole("button")
      .evaluateAll((buttons) =>
        buttons
          .filter((button) => !button.getAttribute("aria-label")?.startsWith("Remove label"))
          .map((button) => Math.round(button.getBoundingClientRect().top)),
      );
    const name = await row.getAttribute("aria-label");
    expect(tops.length, `${name}: its buttons`).toBeGreaterThan(0);
    expect(new Set(tops).size, `${name}: buttons at ${tops.join(", ")}`).toBe(1);
  }
}

async function screenshot(page: Page, testInfo: import("@playwright/test").TestInfo, name: string) {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await testInfo.attach(name, { path, contentType: "image/png" });
}

test("a creator edits a live app, callers keep production until it is promoted, and a rollback is one click", async ({
  page,
  browser,
}, testInfo) => {
  test.setTimeout(180_000);
  await page.setViewportSize(DESKTOP);

  const { consumer, consumerContext, apiKey } = await fundedConsumer(browser);

  // The creator's live app; the consumer's call names the version that answered.
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Release ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, priceCents: 50 });
  const first = await servedVersion(consumer.request, slug, apiKey);
  expect(first).toMatch(/^v\d+$/);
  const production = Number(first.slice(1));
  const next = `v${production + 1}`;

  // The creator edits the system prompt in the editor and saves: a new version callers do not get.
  await page.goto(`/prompts/${slug}`);
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible({ timeout: 30_000 });
  const tabs = page.getByRole("navigation", { name: "Prompt app pages" });
  await expect(tabs.getByRole("link", { name: "Editor" })).toHaveAttribute("aria-current", "page");
  await page.getByRole("tab", { name: "Prompt Config" }).click();
  const system = page.getByRole("textbox", { name: "System Prompt", exact: true });
  await system.click();
  await system.fill("Answer in one short sentence.");
  await page.getByRole("button", { name: "Save Changes" }).click();
  // Saving asks what changed: the note is the new version's, shown in the timeline.
  const note = page.getByRole("dialog", { name: "Save a new version" });
  await note.getByLabel("What changed? (optional)").fill("One short sentence");
  await note.getByRole("button", { name: "Save version" }).click();
  const banner = page.getByRole("region", { name: "Release" });
  await expect(banner).toContainText(`Callers get ${first}. You are editing ${next}.`);
  expect(await servedVersion(consumer.request, slug, apiKey)).toBe(first);

  await screenshot(page, testInfo, "editor-banner-1280");
  await page.setViewportSize(PHONE);
  await expect(banner.getByRole("button", { name: `Promote ${next}` })).toBeInViewport();
  await screenshot(page, testInfo, "editor-banner-390");
  await page.setViewportSize(DESKTOP);

  // Promote from the banner: the dialog says what callers will get; then they get it.
  await banner.getByRole("button", { name: `Promote ${next}` }).click();
  const dialog = page.getByRole("dialog", { name: `Promote ${next} to production?` });
  await expect(dialog).toContainText(`get ${next} on their next call instead of ${first}`);
  await dialog.getByLabel("Reason (optional)").fill("Shorter answers");
  await dialog.getByRole("button", { name: `Promote ${next}` }).click();
  await expect(page.getByText(`${next} is in production`)).toBeVisible();
  await expect(banner).toHaveCount(0);
  expect(await servedVersion(consumer.request, slug, apiKey)).toBe(next);

  // The versions page: the timeline, the diff of what changed, and a one-click rollback.
  await tabs.getByRole("link", { name: "Versions" }).click();
  await expect(page).toHaveURL(new RegExp(`/prompts/${slug}/versions$`));
  const timeline = page.getByRole("list", { name: "Versions" });
  await expect(timeline.getByRole("listitem").first()).toHaveAttribute(
    "aria-label",
    `Version ${production + 1}`,
  );
  await expect(timeline.getByRole("listitem", { name: `Version ${production + 1}` })).toContainText(
    "production",
  );
  await expect(timeline.getByRole("listitem", { name: `Version ${production + 1}` })).toContainText(
    "One short sentence",
  );
  await expect(page.getByLabel("From", { exact: true })).toHaveValue(String(production));
  await expect(page.getByLabel("To", { exact: true })).toHaveValue(String(production + 1));
  const systemDiff = page.getByRole("region", { name: "System prompt" });
  await expect(systemDiff).toContainText("Answer in one short sentence.");
  await expect(page.getByRole("list", { name: "Label moves" })).toContainText(`${first} → ${next}`);
  await expect(page.getByRole("list", { name: "Label moves" })).toContainText("Shorter answers");

  await expectRowButtonsOnOneLine(timeline);
  await screenshot(page, testInfo, "versions-1280");
  await page.setViewportSize(PHONE);
  await expect(page.getByRole("button", { name: `Roll back to ${first}` })).toBeInViewport();
  await expectRowButtonsOnOneLine(timeline);
  await screenshot(page, testInfo, "versions-390");
  await page.setViewportSize(DESKTOP);

  await page.getByRole("button", { name: `Roll back to ${first}` }).click();
  const rollback = page.getByRole("dialog", { name: `Roll back to ${first}?` });
  await rollback.getByRole("button", { name: `Roll back to ${first}` }).click();
  await expect(page.getByText(`Rolled back to ${first}`)).toBeVisible();
  await expect(page.getByRole("list", { name: "Label moves" })).toContainText(`${next} → ${first}`);
  expect(await servedVersion(consumer.request, slug, apiKey)).toBe(first);

  await consumerContext.close();
});

test("the whole release: a live app edited, its evals run, promoted, split 50/50 with each arm's revenue and margin, and rolled back", async ({
  page,
  browser,
}) => {
  test.setTimeout(240_000);
  await page.setViewportSize(DESKTOP);
  const { consumer, consumerContext, apiKey } = await fundedConsumer(browser);

  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Journey ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, priceCents: 50 });
  const first = await servedVersion(consumer.request, slug, apiKey);
  const production = Number(first.slice(1));
  const next = `v${production + 1}`;

  // 1. Edit the live app: callers keep the old version.
  await page.goto(`/prompts/${slug}`);
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible({ timeout: 30_000 });
  await page.getByRole("tab", { name: "Prompt Config" }).click();
  const system = page.getByRole("textbox", { name: "System Prompt", exact: true });
  await system.fill("Answer warmly, in one sentence.");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await expect(page.getByRole("region", { name: "Release" })).toContainText(`You are editing ${next}.`);
  expect(await servedVersion(consumer.request, slug, apiKey)).toBe(first);

  // 2. Its eval suite, run on the new version before it is released.
  const tabs = page.getByRole("navigation", { name: "Prompt app pages" });
  await tabs.getByRole("link", { name: "Evals" }).click();
  await expect(page).toHaveURL(new RegExp(`/prompts/${slug}/evals$`));
  await page.getByRole("button", { name: "Add case" }).first().click();
  const editor = page.getByRole("form", { name: "New test case" });
  await editor.getByLabel("Case name").fill("Answers at all");
  await editor.getByLabel("Query").fill("hello");
  // A new case starts with one assertion: made a latency bound, which any answer in time passes.
  await editor.getByLabel("Assertion 1", { exact: true }).selectOption("max_latency");
  await editor.getByLabel("Most latency (ms)").fill("60000");
  await editor.getByRole("button", { name: "Add case" }).click();
  await expect(page.getByRole("list", { name: "Test cases" })).toContainText("Answers at all");
  await page.getByLabel("Version", { exact: true }).selectOption(String(production + 1));
  await page.getByRole("button", { name: `Run on ${next}` }).click();
  const results = page.getByRole("list", { name: "Case results" });
  await expect(results).toContainText("Answers at all", { timeout: 60_000 });
  await expect(page.getByText("1 / 1")).toBeVisible();

  // 3. Promote it from the versions page: callers get it.
  await tabs.getByRole("link", { name: "Versions" }).click();
  await page
    .getByRole("button", { name: `Promote ${next}` })
    .first()
    .click();
  const promote = page.getByRole("dialog", { name: `Promote ${next} to production?` });
  await promote.getByRole("button", { name: `Promote ${next}` }).click();
  await expect(page.getByText(`${next} is in production`)).toBeVisible();
  expect(await servedVersion(consumer.request, slug, apiKey)).toBe(next);

  // 4. Split production 50/50 between the new and the old version, sticky per end user.
  await tabs.getByRole("link", { name: "Experiments" }).click();
  await expect(page).toHaveURL(new RegExp(`/prompts/${slug}/experiments$`));
  await expect(page.getByLabel("Arm 1 version")).toHaveValue(String(production + 1));
  await expect(page.getByLabel("Arm 2 version")).toHaveValue(String(production));
  await page.getByRole("button", { name: "Start experiment" }).click();
  await expect(page.getByText("Running experiment")).toBeVisible();

  // 21 paying callers, two of them calling twice: 23 calls, an odd number, so the two arms'
  // revenue and margin cannot be equal.
  const served: Record<string, number> = {};
  for (let i = 0; i < 21; i += 1) {
    const version = await servedVersion(consumer.request, slug, apiKey, `caller-${i}`);
    served[version] = (served[version] ?? 0) + 1;
    if (i < 2) {
      // Sticky: the same caller gets the same arm again.
      expect(await servedVersion(consumer.request, slug, apiKey, `caller-${i}`)).toBe(version);
      served[version] += 1;
    }
  }
  expect(Object.keys(served).sort()).toEqual([first, next].sort());

  await page.reload();
  const figures = page.getByRole("table", { name: "Each arm's figures" });
  const row = (label: string) => figures.getByRole("row", { name: new RegExp(`^${label}`) });
  await expect(row("Calls")).toBeVisible({ timeout: 30_000 });
  const cells = async (label: string) =>
    (await row(label).getByRole("cell").allInnerTexts()).map((t) => t.trim());
  // The experiment counts every call made while it ran, on the arm that answered it.
  expect((await cells("Calls")).map(Number)).toEqual([served[next], served[first]]);
  const revenue = await cells("Revenue");
  const margin = await cells("Margin");
  expect(revenue[0]).not.toBe(revenue[1]);
  expect(margin[0]).not.toBe(margin[1]);

  // 5. Roll back in one click: the experiment ends and production returns to its control.
  await page.getByRole("button", { name: "Roll back" }).click();
  await page
    .getByRole("dialog", { name: "Roll back this experiment?" })
    .getByRole("button", { name: "Roll back" })
    .click();
  await expect(page.getByText(`Production is back on ${next}`)).toBeVisible();
  // And the release itself, one click on the versions page.
  await tabs.getByRole("link", { name: "Versions" }).click();
  await page.getByRole("button", { name: `Roll back to ${first}` }).click();
  await page
    .getByRole("dialog", { name: `Roll back to ${first}?` })
    .getByRole("button", { name: `Roll back to ${first}` })
    .click();
  await expect(page.getByText(`Rolled back to ${first}`)).toBeVisible();
  for (let i = 0; i < 3; i += 1)
    expect(await servedVersion(consumer.request, slug, apiKey, `caller-${i}`)).toBe(first);

  await consumerContext.close();
});
