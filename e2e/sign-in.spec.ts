import { expect, test } from "@playwright/test";
import { newPerson, signOut, signUp, submitSignIn } from "./fixtures.ts";

test("a new person signs up, edits their profile, signs out and is sent back to the page they asked for", async ({
  page,
}) => {
  const person = newPerson();

  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole("button", { name: "User menu" })).toHaveText(person.displayName[0] ?? "T");

  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "Profile" }).click();
  await expect(page).toHaveURL(/\/profile$/);
  await expect(page.getByLabel("Email")).toHaveValue(person.email);
  await expect(page.getByLabel("Email")).toBeDisabled();
  await expect(page.getByText("Email cannot be changed through this form.")).toBeVisible();
  await expect(
    page.getByText("Free — no monthly fee; the platform takes its fee per paid call"),
  ).toBeVisible();

  await page.getByLabel("First Name").fill("Grace");
  await page.getByLabel("Last Name").fill("Hopper");
  await page.getByLabel("Display Name").fill("Admiral Grace");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.getByText("Profile updated successfully!")).toBeVisible();
  await expect(page.getByText("Profile updated successfully!")).toBeHidden({ timeout: 6_000 });

  await signOut(page);
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();

  // A protected page while signed out: to /login, then back to that very page after signing in.
  await page.goto("/applications/create?type=workflow");
  await expect(page).toHaveURL(/\/login$/);
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, person);
  await expect(page).toHaveURL(/\/applications\/create\?type=workflow$/);

  await page.goto("/profile");
  await expect(page.getByLabel("First Name")).toHaveValue("Grace");
  await expect(page.getByLabel("Display Name")).toHaveValue("Admiral Grace");
  await expect(page.getByRole("button", { name: "User menu" })).toHaveText("A");
});

test("a wrong password is refused on the sign-in page with a clear message", async ({ page }) => {
  const person = newPerson();
  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  await signOut(page);
  await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();

  await page.goto("/login");
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, { email: person.email, password: "Wrong-pass-99" });
  await expect(page.getByRole("alert")).toHaveText("Incorrect email or password.");
  await expect(page.getByLabel("Email")).toHaveValue(person.email);
});

test("signed-out visitors see the landing page, and unknown paths the not-found screen", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Get Started Free" })).toHaveAttribute("href", "/register");
  await expect(page.getByRole("link", { name: "Learn more" })).toHaveAttribute("href", "#features");
  await page.goto("/no/such/page");
  await expect(page.getByText("Page not found")).toBeVisible();
  await expect(page.getByText("Please check the URL in the address bar and try again.")).toBeVisible();
});
