import { expect, type Page, test } from "@playwright/test";
import { newPerson, signUp, submitSignIn } from "./fixtures.ts";
import { demoURL } from "./playwright.config.ts";

// Issue 19: what a new person trips over in their first hour, each seen in a real browser.

/** The signed-in person's API token, as the SPA keeps it. */
async function bearer(page: Page): Promise<Record<string, string>> {
  const token = await page.evaluate(() => localStorage.getItem("token"));
  return { authorization: `Bearer ${token}` };
}

/** Creates a prompt app from the create page and answers its slug (the detail page opens). */
async function createApp(page: Page, name: string): Promise<string> {
  await page.goto("/applications/create");
  await page.getByLabel("Application Name").fill(name);
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  return new URL(page.url()).pathname.split("/").pop() ?? "";
}

function balance(page: Page) {
  return page
    .getByRole("region", { name: "Balances" })
    .getByText("Balance", { exact: true })
    .locator("xpath=..");
}

test("when the identity provider cannot be reached, sign-in and sign-up say 'Failed to sign in' and give the button back", async ({
  page,
}) => {
  await page.route("**/oidc/**", (route) => route.abort("connectionrefused"));

  await page.goto("/login");
  await page.getByRole("button", { name: "Sign In" }).click();
  await expect(page.getByRole("alert")).toContainText("Failed to sign in");
  await expect(page.getByRole("button", { name: "Sign In" })).toBeEnabled();

  await page.goto("/register");
  await page.getByRole("button", { name: "Create Account" }).click();
  await expect(page.getByRole("alert")).toContainText("Failed to sign in");
  await expect(page.getByRole("button", { name: "Create Account" })).toBeEnabled();

  // Once it is reachable again, the same button goes on to it.
  await page.unroute("**/oidc/**");
  await page.getByRole("button", { name: "Create Account" }).click();
  await expect(page.getByRole("heading", { name: "Create your Promptmint account" })).toBeVisible();
});

test("a new person's first hour: names, wallet, declined card, editor defaults, all-or-nothing publish, dead links", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const person = newPerson();
  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);

  // The profile's names come from the one name the sign-up asked for.
  await page.goto("/profile");
  const [first, ...rest] = person.displayName.split(" ");
  await expect(page.getByLabel("First Name")).toHaveValue(first ?? "");
  await expect(page.getByLabel("Last Name")).toHaveValue(rest.join(" "));

  // A declined card reads SPEC §4's message, with the reason as detail.
  await page.goto("/wallet");
  await expect(balance(page)).toContainText("$0.00");
  await page.getByLabel("Card number").fill("4000 0000 0000 0002");
  await page.getByLabel("Expiry (MM/YY)").fill("12/34");
  await page.getByLabel("CVC").fill("123");
  await page.getByRole("button", { name: "Top up $10.00" }).click();
  const declined = page.getByRole("alert").filter({ hasText: "Payment was not completed successfully" });
  await expect(declined).toContainText("Your card was declined.");
  await expect(balance(page)).toContainText("$0.00");

  // The balance moves outside the tab (here: a top-up through the API) while the person is on
  // another screen; back on the wallet by the menu, without reloading, it shows the new balance.
  await page.getByRole("link", { name: "Dashboard", exact: true }).first().click();
  await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();
  const headers = await bearer(page);
  const intent = await page.request.post("/api/wallet/payment-intents/", {
    headers,
    data: { amount: 700, currency: "usd" },
  });
  expect(intent.ok(), await intent.text()).toBe(true);
  const paid = await page.request.post("/api/billing/sandbox/confirm/", {
    headers,
    data: {
      client_secret: (await intent.json()).client_secret,
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
    },
  });
  expect(paid.ok(), await paid.text()).toBe(true);
  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "Wallet" }).click();
  await expect(balance(page)).toContainText("$7.00");

  // A new app opens in the prompt editor on SPEC §9's defaults, selected among its options.
  const slug = await createApp(page, `First Hour ${Date.now().toString(36)}`);
  await page.goto(`/prompts/${slug}`);
  await page.getByRole("tab", { name: "Prompt Config" }).click();
  await expect(page.getByLabel("Model", { exact: true })).toHaveValue("gpt4");
  await expect(page.getByLabel("Max Tokens", { exact: true })).toHaveValue("1000");

  // A toast after saving does not stand in the way of the editor's buttons.
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await expect(page.getByText("Changes saved")).toBeVisible();
  const saved = page.waitForResponse((r) => r.url().includes("/prompt-application/") && r.ok());
  await page.getByRole("button", { name: "Save Changes" }).click({ timeout: 2_000 });
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await saved;

  // Save & Publish with a broken template publishes nothing: the app stays a draft.
  await page.goto(`/applications/${slug}/edit`);
  await expect(page.getByRole("heading", { name: "Prompt Builder", level: 1 })).toBeVisible();
  const template = page.getByRole("textbox", { name: "User Prompt Template", exact: true });
  await template.click();
  await template.fill("About {{topic");
  await page.getByRole("button", { name: "Save & Publish" }).click();
  await expect(page.getByText(/Unclosed or unopened placeholder/).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Save & Publish" })).toBeVisible();
  const app = await page.request.get(`/api/app/${slug}/`, { headers });
  expect((await app.json()).status).toBe("draft");
  const prompt = await page.request.get(`/api/app/${slug}/prompt/`, { headers });
  expect((await prompt.json()).active_version.prompt_template).toBe("{{query}}");
  await page.goto(`/applications/${slug}`);
  await expect(page.getByRole("button", { name: "Set as Draft" })).toBeDisabled();

  // A missing app has a way back; a payment return page without a payment reads as neutral.
  await page.goto("/applications/no-such-app-here");
  await expect(page.getByRole("heading", { name: "Application not found" })).toBeVisible();
  await page.getByRole("link", { name: "Back to Applications" }).click();
  await expect(page.getByRole("heading", { name: "Applications", level: 1 })).toBeVisible();
  await page.goto("/billing/success");
  await expect(page.getByRole("heading", { name: "Nothing to confirm here" })).toBeVisible();
  await expect(page.getByText("Payment was not completed successfully")).toHaveCount(0);
});

test("a new screen opens at its top, and Back returns to where the reader was", async ({ page }) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  await page.setViewportSize({ width: 1280, height: 480 });
  await page.goto("/applications/create");
  await expect(page.getByRole("heading", { name: "Create Application", level: 1 })).toBeVisible();

  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  const scrolled = await page.evaluate(() => window.scrollY);
  expect(scrolled).toBeGreaterThan(200);
  await page.getByRole("link", { name: "Analytics", exact: true }).first().click();
  const title = page.getByRole("heading", { name: "Global Analytics", level: 1 });
  await expect(title).toBeVisible();
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
  await expect(title).toBeInViewport();

  await page.goBack();
  await expect(page.getByRole("heading", { name: "Create Application", level: 1 })).toBeAttached();
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(scrolled - 20);
});

test.describe("with demo data", () => {
  test.use({ baseURL: demoURL });

  test("Top Errors labels show each error type in full with its rounded percent at 1280 px", async ({
    page,
  }) => {
    await page.goto("/login");
    await page.getByRole("button", { name: "Sign In" }).click();
    await submitSignIn(page, { email: "demo@promptmint.dev", password: "Mint-sandbox-2026" });
    await expect(page).toHaveURL(/\/(dashboard)?$/);
    await page.goto("/analytics");
    const card = page.getByRole("region", { name: "Top Errors" });
    await expect(card.getByRole("list", { name: "Error types" })).toBeVisible();

    const names = await card
      .getByRole("listitem")
      .evaluateAll((items) =>
        items.map((item) => item.querySelector("span span:last-child")?.textContent ?? ""),
      );
    expect(names.length).toBeGreaterThan(0);
    await card.scrollIntoViewIfNeeded();
    const svg = card.locator("svg.recharts-surface").first();
    await expect(svg.locator("text").first()).toBeVisible();
    const bounds = await svg.boundingBox();
    const labels = await svg.locator("text").evaluateAll((texts) =>
      texts.map((text) => {
        const lines = [...text.querySelectorAll("tspan")].map((line) => line.textContent ?? "");
        const box = text.getBoundingClientRect();
        return {
          name: lines.slice(0, -1).join(""),
          percent: lines.at(-1) ?? "",
          left: box.left,
          right: box.right,
        };
      }),
    );
    expect(labels.map((label) => label.name).sort()).toEqual([...names].sort());
    for (const label of labels) {
      expect(label.name).not.toContain("…");
      expect(label.percent).toMatch(/^\d{1,3}%$/);
      expect(label.left).toBeGreaterThanOrEqual(bounds?.x ?? 0);
      expect(label.right).toBeLessThanOrEqual((bounds?.x ?? 0) + (bounds?.width ?? 0));
    }
  });
});
