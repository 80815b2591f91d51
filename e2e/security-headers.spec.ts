import { expect, type Page, test } from "@playwright/test";
import { newPerson, signUp } from "./fixtures.ts";

/** Every Content-Security-Policy violation the page reports, from the DOM event and the console. */
async function watchCsp(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction("reportCspViolation", (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(
        `${event.violatedDirective} blocked ${event.blockedURI}`,
      );
    });
  });
  return violations;
}

test("the SPA, the sign-up page and the API docs run under the strict CSP without a single violation", async ({
  page,
}) => {
  const violations = await watchCsp(page);
  const home = await page.goto("/");
  expect(home?.headers()["content-security-policy"]).toMatch(/script-src 'self'(;|$)/);
  expect(home?.headers()["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
  await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();

  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole("button", { name: "User menu" })).toBeVisible();

  // The sign-in callback alone may be framed, by this origin only (silent renew's hidden frame).
  const callback = await page.request.get("/auth/callback");
  expect(callback.headers()["content-security-policy"]).toMatch(/frame-ancestors 'self'$/);

  // The API reference (Scalar, decision 055) lays out the whole document: slow under trace recording.
  await page.goto("/api/docs");
  await expect(page.getByRole("heading", { name: "Promptmint API", level: 1 })).toBeVisible({
    timeout: 45_000,
  });
  expect(violations).toEqual([]);
});
