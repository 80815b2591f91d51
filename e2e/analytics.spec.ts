import { expect, type Locator, type Page, test } from "@playwright/test";
import { createLiveApp, newPerson, signUp, topUpFromZero } from "./fixtures.ts";

/** The figure of a summary card, found by its label. */
function statValue(page: Page, label: string): Locator {
  return page
    .getByRole("region", { name: "Summary" })
    .locator("dl")
    .filter({ has: page.getByText(label, { exact: true }) })
    .locator("dd");
}

/** One blocking completion from the API test console, as the signed-in owner (sandbox model). */
async function callFromConsole(page: Page, slug: string, text: string): Promise<void> {
  const answered = page.waitForResponse(
    (response) =>
      response.request().method() === "POST" &&
      new URL(response.url()).pathname === `/api/app/${slug}/completion-messages`,
  );
  await page.getByLabel("Input").fill(text);
  await page.getByRole("button", { name: "Test Completion" }).click();
  expect((await answered).status()).toBe(200);
  await expect(page.getByRole("region", { name: "Completion result" })).toBeVisible();
}

test("a customer's two calls are in the analytics; the creator's own test calls are not", async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);

  const name = `Chart Writer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, description: "Writes about charts.", priceCents: 10 });

  // The creator tries their app from the API test console: their own calls, recorded apart from
  // customers' (decision 078), so the app has no customer traffic yet.
  await page.goto(`/api-test?app=${slug}`);
  await expect(page.getByLabel("App Slug")).toHaveValue(slug);
  await callFromConsole(page, slug, "my own test");
  await page.goto(`/applications/${slug}/analytics`);
  await expect(page.getByRole("heading", { name: `${name} Analytics`, level: 1 })).toBeVisible();
  await expect(page.getByText(`${name} was not called in the last 30 days.`)).toBeVisible();

  // A customer, in a browser of their own, tops up and calls the app twice.
  const customerContext = await browser.newContext({ baseURL: test.info().project.use.baseURL });
  const customer = await customerContext.newPage();
  await signUp(customer, newPerson());
  await expect(customer).toHaveURL(/\/dashboard$/);
  await customer.goto("/wallet");
  await topUpFromZero(customer, 10);
  await customer.goto(`/api-test?app=${slug}`);
  await expect(customer.getByLabel("App Slug")).toHaveValue(slug);
  await callFromConsole(customer, slug, "bar charts");
  await callFromConsole(customer, slug, "pie charts");
  await customerContext.close();

  // Global analytics: the customer's two calls, made by this app (not the creator's test).
  await page.goto("/analytics");
  await expect(page.getByRole("heading", { name: "Global Analytics", level: 1 })).toBeVisible();
  await expect(page.getByRole("button", { name: "30d" })).toHaveAttribute("aria-pressed", "true");
  await expect(statValue(page, "Total Invocations")).toHaveText("2");
  await expect(statValue(page, "Success Rate")).toHaveText("100.0%");
  await expect(
    page.getByRole("region", { name: "Invocations Over Time" }).getByRole("application"),
  ).toBeVisible();
  const performance = page.getByRole("region", { name: "Application Performance" });
  const row = performance.getByRole("row", { name: new RegExp(name) });
  await expect(row).toBeVisible();
  await expect(row.getByRole("cell").nth(1)).toHaveText("2");
  await expect(page.getByRole("region", { name: "Top Errors" })).toHaveCount(0);

  await page.getByRole("button", { name: "7d" }).click();
  await expect(page).toHaveURL(/\/analytics\?days=7$/);
  await expect(statValue(page, "Total Invocations")).toHaveText("2");

  // The app's own analytics, reached from its row.
  await row.getByRole("link", { name }).click();
  await expect(page).toHaveURL(new RegExp(`/applications/${slug}/analytics$`));
  await expect(page.getByRole("heading", { name: `${name} Analytics`, level: 1 })).toBeVisible();
  await expect(statValue(page, "Total Invocations")).toHaveText("2");
  const recent = page.getByRole("region", { name: "Recent Invocations" });
  await expect(recent.locator("tbody tr")).toHaveCount(2);
  await expect(recent.locator("tbody tr").first()).toContainText("success");

  await page.getByRole("link", { name: "Back to Application" }).click();
  await expect(page).toHaveURL(new RegExp(`/applications/${slug}$`));
});
