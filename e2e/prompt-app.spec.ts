import { expect, type Page, test } from "@playwright/test";
import { createApiKey, newPerson, signUp } from "./fixtures.ts";

/** CodeMirror editors are labelled text boxes; fill replaces their whole text. */
async function fillEditor(page: Page, name: string, text: string): Promise<void> {
  const editor = page.getByRole("textbox", { name, exact: true });
  await editor.click();
  await editor.fill(text);
  await expect(editor).toHaveText(text);
}

test("a creator builds a prompt app, publishes it, and calls it with an API key", async ({ page }) => {
  const person = newPerson();
  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole("region", { name: "Get started" })).toBeVisible();

  // Create the app.
  const name = `Tea Writer ${Date.now().toString(36)}`;
  await page.getByRole("link", { name: /Create your first app/ }).click();
  await expect(page).toHaveURL(/\/applications\/create$/);
  await page.getByLabel("Application Name").fill(name);
  await page.getByLabel("Description").fill("Writes about any tea.");
  // A chat app: the API console tests it both ways (completion-messages answers every prompt app,
  // chat-messages only chat apps, as Dify's does).
  await page.getByLabel("Interaction Mode").selectOption("chat");
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";
  expect(slug).toMatch(/^tea-writer-/);
  await expect(page.getByText(`/api/app/${slug}/completion-messages`)).toBeVisible();

  // Edit its template and schema in the builder.
  await page.getByRole("link", { name: "Open Prompt Builder" }).click();
  await expect(page).toHaveURL(new RegExp(`/applications/${slug}/edit$`));
  await expect(page.getByRole("heading", { name: "Prompt Builder" })).toBeVisible();
  await expect(page.getByLabel("URL Slug")).toBeDisabled();

  await page.getByRole("tab", { name: "Input/Output Schema" }).click();
  const inputSchema = page.getByRole("region", { name: "Input Schema" });
  await inputSchema.getByRole("button", { name: "Delete query" }).click();
  await expect(
    inputSchema.getByText('No fields defined yet. Click "Add Field" to get started.'),
  ).toBeVisible();
  await inputSchema.getByRole("button", { name: "+ Add Field" }).click();
  await inputSchema.getByLabel("Field Name").fill("topic");
  await inputSchema.getByLabel("Required").check();
  await inputSchema.getByLabel("Description").fill("The tea to write about");
  await inputSchema.getByLabel("Default Value").fill("green tea");
  await expect(inputSchema.getByRole("figure")).toContainText('"topic"');

  await page.getByRole("tab", { name: "Basic Info" }).click();
  await fillEditor(page, "System Prompt", "You are a tea sommelier.");
  await fillEditor(page, "User Prompt Template", "Write about {{topic}}.");
  await expect(page.locator(".cm-template-variable", { hasText: "{{topic}}" })).toBeVisible();

  await page.getByRole("tab", { name: "Preview & Test" }).click();
  await expect(page.getByLabel("topic", { exact: true })).toHaveValue("green tea");
  await page.getByLabel("topic", { exact: true }).fill("oolong");
  await page.getByRole("button", { name: "Test Prompt" }).click();
  const result = page.getByRole("status", { name: "Test result" });
  await expect(result.getByText("Template Valid")).toBeVisible();
  await expect(result).toContainText("Write about oolong.");

  await page.getByRole("button", { name: "Save & Publish" }).click();
  await expect(page.getByText("Prompt published")).toBeVisible();
  // Live now: the builder says that Update Prompt saves a version callers do not get yet, and
  // Save & Publish stays, to publish the next one (decision 057).
  await expect(page.getByText(/This app is live/)).toBeVisible();
  await page.getByRole("tab", { name: "Basic Info" }).click();
  await expect(page.getByLabel("Status")).toHaveValue("live");

  // Create an API key and read it from the page (it is shown once).
  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "API Keys" }).click();
  await expect(page).toHaveURL(/\/api-keys$/);
  const apiKey = await createApiKey(page, "E2E journey");
  await page.getByRole("button", { name: "Copy" }).click();
  await expect(page.getByRole("row", { name: /E2E journey/ })).toContainText("Never");

  // Call the app as the key's holder from the API test console.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API Test" }).click();
  await expect(page.getByRole("heading", { name: "API Test Console" })).toBeVisible();
  await page.getByLabel("Application").selectOption(slug);
  await expect(page.getByLabel("App Slug")).toHaveValue(slug);
  await page.getByLabel("API Key").fill(apiKey);

  await page.getByLabel("Input").fill("jasmine tea");
  await page.getByRole("button", { name: "Test Completion" }).click();
  const completion = page.getByRole("region", { name: "Completion result" });
  await expect(completion).toContainText("Write about jasmine tea.");
  await expect(completion.getByLabel("Token usage")).toContainText("Total Tokens");

  await page.getByLabel("Query").fill("Which water temperature?");
  await page.getByRole("button", { name: "Test Chat" }).click();
  const conversation = page.getByRole("region", { name: "Conversation" });
  await expect(conversation.getByRole("listitem", { name: "Turn 1" })).toContainText(
    "Which water temperature?",
  );
  await expect(conversation.getByRole("listitem", { name: "Turn 1" })).toContainText(
    "Write about green tea.",
  );
  const conversationLine = conversation.getByText(/^Conversation /);
  const firstId = await conversationLine.textContent();

  await page.getByLabel("Query").fill("And how long should it steep?");
  await page.getByRole("button", { name: "Test Chat" }).click();
  await expect(conversation.getByRole("listitem", { name: "Turn 2" })).toContainText(
    "how long should it steep",
  );
  await expect(conversation.getByRole("listitem", { name: "Turn 1" })).toBeVisible();
  expect(await conversationLine.textContent()).toBe(firstId);
  await expect(page.getByRole("button", { name: "New conversation" })).toBeVisible();

  // The key has been used now.
  await page.goto("/api-keys");
  await expect(page.getByRole("row", { name: /E2E journey/ })).not.toContainText("Never");

  // Give the key a daily spend limit: the row shows its spend against it (the owner's calls are free).
  await page.getByRole("button", { name: "Edit E2E journey" }).click();
  const edit = page.getByRole("dialog", { name: "Edit E2E journey" });
  await edit.getByLabel("Spend limit ($)").fill("5");
  await edit.getByLabel("Limit resets").selectOption("daily");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByRole("row", { name: /E2E journey/ })).toContainText(
    "$0.00 of $5.00 today, resets 00:00 UTC",
  );
});
