import { expect, test } from "@playwright/test";
import { newPerson, type Person, signUp, verifyEmailFromOutbox } from "./fixtures.ts";
import { VERIFYING_OPERATOR_EMAIL } from "./playwright.config.ts";

/**
 * An address in ADMIN_EMAILS is not enough (docs/decisions/041): whoever signs up with it is
 * refused /admin until they open the link mailed to it. Without SMTP_URL the server keeps its
 * mail in the outbox, which the sign-up page points to.
 */
test("an ADMIN_EMAILS address gets /admin only once its owner opens the mailed link with the account's password", async ({
  page,
}) => {
  const operator: Person = { ...newPerson(), email: VERIFYING_OPERATOR_EMAIL, displayName: "New Operator" };

  await page.goto("/register");
  await page.getByRole("button", { name: "Create Account" }).click();
  await expect(page.getByText("No mail server is configured: open the outbox at")).toBeVisible();
  await signUp(page, operator);
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }),
  ).toHaveCount(0);

  await page.goto("/admin");
  await expect(page.getByText(/Only the platform's operators may use \/admin/).first()).toBeVisible();
  await expect(page.getByText("Verify your email address")).toBeVisible();
  await expect(page.getByRole("button", { name: "Resend verification email" })).toBeVisible();
  await expect(page.getByRole("region", { name: "Figures" })).toHaveCount(0);

  // The link alone (a mail scanner fetching it, or a click without the account's password)
  // verifies nothing: it asks for the password.
  const scanner = await page.context().newPage();
  await scanner.goto("/oidc/dev/outbox");
  const link = await scanner
    .getByRole("listitem")
    .filter({ hasText: `to ${operator.email.toLowerCase()}` })
    .getByRole("link", { name: "Verify my email address" })
    .first()
    .getAttribute("href");
  await scanner.goto(link ?? "");
  await expect(scanner.getByRole("heading", { name: "Verify your email address" })).toBeVisible();
  await expect(scanner.getByText("Did not create this account?")).toBeVisible();
  await scanner.close();
  await page.goto("/admin");
  await expect(page.getByText(/Only the platform's operators may use \/admin/).first()).toBeVisible();

  await verifyEmailFromOutbox(page, operator);
  await page.goto("/admin");
  await expect(page.getByRole("heading", { name: "Operator", level: 1 })).toBeVisible();
  await expect(page.getByRole("region", { name: "Figures" })).toBeVisible();
  const audit = page.getByRole("region", { name: "Audit log" });
  await expect(audit.getByRole("row", { name: /ADMIN_EMAILS bootstrap/ }).first()).toContainText(
    "operator.grant",
  );
  await expect(page.getByText("Verify your email address")).toHaveCount(0);
});
