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
 * Opens the verification link mailed to the person, from the development outbox (no SMTP_URL), as
 * they would from their mailbox, and confirms it with their password (the link alone verifies nothing).
 */
export async function verifyEmailFromOutbox(
  page: Page,
  person: Pick<Person, "email" | "password">,
): Promise<void> {
  const { email } = person;
  await page.goto("/oidc/dev/outbox");
  await expect(page.getByRole("heading", { name: "Outbox" })).toBeVisible();
  const message = page
    .getByRole("listitem")
    .filter({ hasText: `to ${email.toLowerCase()}` })
    .filter({ hasText: "Verify your email address" })
    .first();
  await message.getByRole("link", { name: "Verify my email address" }).click();
  await expect(page.getByRole("heading", { name: "Verify your email address" })).toBeVisible();
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Verify my email address" }).click();
  await expect(page.getByRole("heading", { name: "Email address verified" })).toBeVisible();
}

/**
 * On /applications/create: a prompt app with these form values (public unless `visibility` says
 * otherwise; the starter template, answered by the sandbox model), set live. Answers its slug; its page stays open.
 */
export async function createLiveApp(
  page: Page,
  app: {
    name: string;
    description?: string;
    mode?: "chat";
    visibility?: "embed";
    priceCents: number;
  },
): Promise<string> {
  await page.goto("/applications/create");
  await page.getByLabel("Application Name").fill(app.name);
  if (app.description) await page.getByLabel("Description").fill(app.description);
  if (app.mode) await page.getByLabel("Interaction Mode").selectOption(app.mode);
  await page.getByLabel("Visibility").selectOption(app.visibility ?? "public");
  await page.getByLabel("Price per API Call (cents)").fill(String(app.priceCents));
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page.getByRole("heading", { name: app.name, level: 1 })).toBeVisible();
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";
  await page.getByRole("button", { name: "Set as Live" }).click();
  await expect(page.getByRole("button", { name: "Set as Live" })).toBeDisabled();
  return slug;
}

/** On the API Keys page: creates a key named `name` and reads it from the page (it is shown once). */
export async function createApiKey(page: Page, name: string): Promise<string> {
  await page.getByLabel("Key Name").fill(name);
  await page.getByRole("button", { name: "Create Key" }).click();
  const shownKey = page.getByLabel("New API key");
  await expect(shownKey).toHaveValue(/^pm_/);
  return shownKey.inputValue();
}

/** From the API test console: `times` completion calls to `slug` with `apiKey`, each answered 200. */
export async function callFromTestConsole(
  page: Page,
  call: { slug: string; apiKey: string; input: string; times: number },
): Promise<void> {
  await page.goto("/api-test");
  await page.getByLabel("App Slug").fill(call.slug);
  await page.getByLabel("API Key").fill(call.apiKey);
  await page.getByLabel("Input").fill(call.input);
  for (let n = 1; n <= call.times; n++) {
    const answered = page.waitForResponse(
      (response) =>
        response.url().includes(`/api/app/${call.slug}/completion-messages`) && response.status() === 200,
    );
    await page.getByRole("button", { name: "Test Completion" }).click();
    await answered;
    await expect(page.getByRole("button", { name: "Test Completion" })).toBeEnabled();
  }
}

/** On the wallet page, from a zero balance: tops up `dollars` with the sandbox's good card (4242…). */
export async function topUpFromZero(page: Page, dollars: number): Promise<void> {
  await page.getByRole("button", { name: `$${dollars}`, exact: true }).click();
  await page.getByLabel("Card number").fill("4242 4242 4242 4242");
  await page.getByLabel("Expiry (MM/YY)").fill("12/34");
  await page.getByLabel("CVC").fill("123");
  await page.getByRole("button", { name: `Top up $${dollars}.00` }).click();
  await expect(
    page.getByText(`Added $${dollars}.00 to your wallet. New balance: $${dollars}.00.`),
  ).toBeVisible();
}
