import { expect, type Page } from "@playwright/test";

export interface Person {
  email: string;
  password: string;
  displayName: string;
}

export function newPerson(): Person {
  const id = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  return { email: `e2e-${id}@example.com`, password: "Sturdy-pass-42", displayName: `Tester ${id}` };
}

/** From /register through the issuer's sign-up page, back into the SPA. */
export async function signUp(page: Page, person: Person): Promise<void> {
  await page.goto("/register");
  await completeSignUp(page, person);
}

/** On the SPA's sign-up screen: on through the issuer's sign-up page, back into the SPA. */
export async function completeSignUp(page: Page, person: Person): Promise<void> {
  await page.getByRole("button", { name: "Create Account" }).click();
  await expect(page.getByRole("heading", { name: "Create your Promptmint account" })).toBeVisible();
  await page.getByLabel("Display name").fill(person.displayName);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Create account" }).click();
}

/** On the issuer's sign-in page: fill the form and submit. */
export async function submitSignIn(page: Page, person: Pick<Person, "email" | "password">): Promise<void> {
  await expect(page.getByRole("heading", { name: "Sign in to Promptmint" })).toBeVisible();
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

export async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "Sign out" }).click();
}

/**
 * Opens the verification link mailed to `email`, from the development outbox (no SMTP_URL), as the
 * person would from their mailbox.
 */
export async function verifyEmailFromOutbox(page: Page, email: string): Promise<void> {
  await page.goto("/oidc/dev/outbox");
  await expect(page.getByRole("heading", { name: "Outbox" })).toBeVisible();
  const message = page
    .getByRole("listitem")
    .filter({ hasText: `to ${email.toLowerCase()}` })
    .filter({ hasText: "Verify your email address" })
    .first();
  await message.getByRole("link", { name: "Verify my email address" }).click();
  await expect(page.getByRole("heading", { name: "Email address verified" })).toBeVisible();
}
