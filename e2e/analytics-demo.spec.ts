import { expect, type Page, test } from "@playwright/test";
import { submitSignIn } from "./fixtures.ts";
import { demoURL } from "./playwright.config.ts";

// Runs against the second e2e server, which `npm run seed:demo` filled with two weeks of calls.
test.use({ baseURL: demoURL });

const demo = { email: "demo@promptmint.dev", password: "Mint-sandbox-2026" };

async function expectChart(page: Page, title: string) {
  const region = page.getByRole("region", { name: title });
  await expect(region).toBeVisible();
  await expect(region.locator("svg.recharts-surface").first()).toBeVisible();
}

async function switchWindow(page: Page, label: "7d" | "30d" | "90d", pathPart: string) {
  const reloaded = page.waitForResponse(
    (r) => r.url().includes(pathPart) && r.url().includes(`days=${label.replace("d", "")}`) && r.ok(),
  );
  await page.getByRole("button", { name: label, exact: true }).click();
  await reloaded;
  await expect(page.getByRole("button", { name: label, exact: true })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
}

test("with demo data, both analytics screens show every card, chart and table and reload per window", async ({
  page,
}, testInfo) => {
  await page.goto("/login");
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, demo);
  await expect(page).toHaveURL(/\/(dashboard)?$/);

  await page.goto("/analytics");
  await expect(page.getByRole("heading", { name: "Global Analytics" })).toBeVisible();
  const summary = page.getByRole("region", { name: "Summary" });
  for (const card of ["Applications", "Total Invocations", "Active Users", "Success Rate"])
    await expect(summary.getByText(card)).toBeVisible();
  await expect(summary.getByText("3", { exact: true })).toBeVisible();
  for (const chart of [
    "Invocations Over Time",
    "Success vs Error Rate",
    "Response Time Trend",
    "Token Usage",
  ])
    await expectChart(page, chart);
  const table = page.getByRole("region", { name: "Application Performance" });
  for (const app of ["Blog Post Writer", "Support Chatbot", "Research Agent"])
    await expect(table.getByText(app)).toBeVisible();
  await expect(
    page.getByRole("region", { name: "Top Errors" }).getByRole("list", { name: "Error types" }),
  ).toBeVisible();
  await testInfo.attach("global-analytics-30d", {
    body: await page.screenshot({ fullPage: true }),
    contentType: "image/png",
  });
  await switchWindow(page, "7d", "/analytics/dashboard/");
  await switchWindow(page, "90d", "/analytics/dashboard/");

  await table.getByRole("link", { name: "Blog Post Writer" }).click();
  await expect(page.getByRole("heading", { name: "Blog Post Writer Analytics" })).toBeVisible();
  for (const card of ["Total Invocations", "Unique Users", "Success Rate", "Avg Response Time"]) {
    await expect(page.getByRole("region", { name: "Summary" }).getByText(card)).toBeVisible();
  }
  for (const chart of ["Usage Over Time", "Performance Metrics", "Response Time Trend", "Revenue Trend"])
    await expectChart(page, chart);
  // The seed's prompt app answers with its production version: the by-version table marks it,
  // and each recent invocation names it (issue 31).
  const byVersion = page.getByRole("region", { name: "By version", exact: true });
  await expect(byVersion.getByRole("row", { name: /v1 Production/ })).toBeVisible();
  const recent = page.getByRole("region", { name: "Recent Invocations" });
  await expect(recent.getByRole("row")).toHaveCount(21);
  await expect(recent.getByRole("columnheader", { name: "Version" })).toBeVisible();
  await expect(recent.getByRole("cell", { name: "v1", exact: true }).first()).toBeVisible();
  await testInfo.attach("application-analytics", {
    body: await page.screenshot({ fullPage: true }),
    contentType: "image/png",
  });
  await switchWindow(page, "7d", "/analytics/usage/");
});
