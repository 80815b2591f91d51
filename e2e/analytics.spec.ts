import { expect, type Locator, type Page, test } from "@playwright/test";
import { newPerson, signUp } from "./fixtures.ts";

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

test("a creator calls a new app twice and finds both calls in the analytics", async ({ page }) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);

  const name = `Chart Writer ${Date.now().toString(36)}`;
  await page.getByRole("link", { name: "Create Application" }).first().click();
  await page.getByLabel("Application Name").fill(name);
  await page.getByLabel("Description").fill("Writes about charts.");
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";

  await page.goto(`/api-test?app=${slug}`);
  await expect(page.getByLabel("App Slug")).toHaveValue(slug);
  await callFromConsole(page, slug, "bar charts");
  await callFromConsole(page, slug, "pie charts");

  // Global analytics: both calls, made by this app.
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
