import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page, test } from "@playwright/test";
import { submitSignIn } from "./fixtures.ts";
import { demoURL } from "./playwright.config.ts";

// Every route at desktop and phone width, signed out and signed in (the seeded demo creator, so the
// screens have data), saved for people to look at: CI keeps them in .tmp/test-results/screenshots.
// Each screen must fit a 390 px phone without scrolling sideways, and none may show the error page.
test.use({ baseURL: demoURL });
test.setTimeout(300_000);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shots = path.join(root, ".tmp/test-results/screenshots");
const demo = { email: "demo@promptmint.dev", password: "Mint-sandbox-2026" };
const widths = [1280, 390] as const;

const signedOutRoutes = [
  "/",
  "/login",
  "/register",
  "/explore",
  "/billing/success",
  "/no-such-page",
  "/dashboard",
];
const signedInRoutes = [
  "/dashboard",
  "/applications",
  "/applications/create",
  "/analytics",
  "/profile",
  "/prompt-builder",
  "/prompts",
  "/workflows",
  "/api-keys",
  "/webhooks",
  "/wallet",
  "/earnings",
  "/api-test",
  "/explore",
  "/billing/success",
];

/** What is wrong with the screen at this width: sideways scrolling on a phone, or the error page. */
async function capture(page: Page, route: string, signedIn: boolean): Promise<string[]> {
  const problems: string[] = [];
  for (const width of widths) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.goto(route);
    await page.waitForLoadState("networkidle");
    // Charts finish drawing, fonts settle.
    await page.waitForTimeout(300);
    const name = `${signedIn ? "in" : "out"}-${width}-${route.replace(/[^a-z0-9]+/gi, "_").replace(/^_|_$/g, "") || "home"}.png`;
    await page.screenshot({ path: path.join(shots, name), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (width === 390 && overflow > 0) problems.push(`${route} at 390 px scrolls sideways by ${overflow} px`);
    if (await page.getByText("Something went wrong").isVisible())
      problems.push(`${route} at ${width} px shows the error page`);
  }
  return problems;
}

test("every route, at 1280 and 390 px, signed out and signed in, fits and renders", async ({ page }) => {
  mkdirSync(shots, { recursive: true });
  const problems: string[] = [];
  for (const route of signedOutRoutes) problems.push(...(await capture(page, route, false)));

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/login");
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, demo);
  await expect(page).toHaveURL(/\/(dashboard)?$/);
  // The demo creator's apps, each with its own screens (and its editor, by type).
  const apps = await page.evaluate(async () => {
    const stored = Object.keys(localStorage).find((key) => key.startsWith("oidc.user:"));
    const token = stored ? JSON.parse(localStorage.getItem(stored) ?? "{}").access_token : "";
    const response = await fetch("/api/app/", { headers: { authorization: `Bearer ${token}` } });
    const body = await response.json();
    return (Array.isArray(body) ? body : (body.results ?? body.data ?? [])).map(
      (app: { slug: string; type: string }) => ({ slug: app.slug, type: app.type }),
    );
  });
  expect(apps.length).toBeGreaterThan(0);
  const appRoutes = apps.flatMap(({ slug, type }: { slug: string; type: string }) => [
    type === "workflow" ? `/workflows/${slug}` : `/prompts/${slug}`,
    `/applications/${slug}`,
    `/applications/${slug}/edit`,
    `/applications/${slug}/analytics`,
    `/applications/${slug}/billing`,
    `/explore/${slug}`,
  ]);
  for (const route of [...signedInRoutes, ...appRoutes]) problems.push(...(await capture(page, route, true)));
  expect(problems).toEqual([]);

  // The seeded keys carry every cap (spend limit, expiry, allowed apps): the phone check above saw them.
  await page.goto("/api-keys");
  await expect(page.getByRole("rowheader", { name: "Production backend" })).toBeVisible();
  await expect(page.getByRole("progressbar", { name: "Spend of Production backend" })).toBeVisible();
});
