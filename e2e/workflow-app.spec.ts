import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { newPerson, signUp } from "./fixtures.ts";

// The creator's own workflow: a loopback endpoint speaking the webhook provider's JSON contract.
// The server under test runs with ALLOW_PRIVATE_UPSTREAMS=true, so it may call 127.0.0.1.
let webhook: Server;

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = "";
  for await (const chunk of request) raw += String(chunk);
  try {
    const body: unknown = JSON.parse(raw);
    return typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

test.beforeAll(async () => {
  webhook = createServer(async (request, response) => {
    if (request.method !== "POST") {
      response.writeHead(405).end();
      return;
    }
    const body = await readJson(request);
    const said =
      typeof body.query === "string" && body.query !== "" ? body.query : JSON.stringify(body.inputs ?? {});
    response
      .writeHead(200, { "Content-Type": "application/json" })
      .end(JSON.stringify({ answer: `webhook says: ${said}`, usage: { input_tokens: 3, output_tokens: 4 } }));
  });
  await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve));
  const { port } = webhook.address() as AddressInfo;
  process.env.E2E_WEBHOOK_URL = `http://127.0.0.1:${port}/hook`;
});

test.afterAll(async () => {
  await new Promise<void>((resolve) => webhook.close(() => resolve()));
});

test("a creator puts a workflow on their webhook, tests it, sets it live and calls it from the console", async ({
  page,
}) => {
  const webhookUrl = process.env.E2E_WEBHOOK_URL ?? "";
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);

  // Create: a workflow app starts with the provider App ID and API Key.
  await page.goto("/applications/create?type=workflow");
  await page.getByLabel("Application Name").fill("Echo Flow");
  await page.getByLabel("Description").fill("Answers through my own webhook.");
  await page.getByLabel("App ID").fill("echo-app");
  await page.getByLabel("API Key").fill("sk-echo-secret-1234");
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page).toHaveURL(/\/applications\/[a-z0-9-]+$/);
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";

  // The workflow list leads to its editor.
  await page.goto("/workflows");
  await expect(page.getByText(`/${slug}`)).toBeVisible();
  await page.getByRole("link", { name: "Manage Echo Flow" }).click();
  await expect(page).toHaveURL(new RegExp(`/workflows/${slug}$`));
  await expect(page.getByRole("heading", { name: "Echo Flow", level: 1 })).toBeVisible();

  // Provider Config: from the Dify start to the webhook, saved, then tested for real.
  await page.getByRole("tab", { name: "Provider Config" }).click();
  await expect(page.getByLabel("Provider", { exact: true })).toHaveValue("dify");
  await expect(page.getByLabel(/App API Key/)).toHaveAttribute("type", "password");
  await page.getByLabel("Provider", { exact: true }).selectOption("webhook");
  await expect(page.getByText("Promptmint's JSON contract", { exact: false })).toBeVisible();
  await page.getByRole("textbox", { name: "Endpoint URL" }).fill(webhookUrl);
  await expect(page.getByLabel(/Bearer Token/)).toHaveAttribute("type", "password");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await expect(page.getByText("Changes saved")).toBeVisible();

  await page.getByRole("button", { name: "Test Config" }).click();
  const result = page.getByRole("status", { name: "Test result" });
  await expect(result.getByRole("heading", { name: "Configuration Valid" })).toBeVisible();
  await expect(result).toContainText("webhook says: ping");

  // Basic Settings: set it live.
  await page.getByRole("tab", { name: "Basic Settings" }).click();
  await page.getByLabel("Status").selectOption("live");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await expect(page.getByRole("main").locator("header").getByText("live", { exact: true })).toBeVisible();

  // The API test console calls it like a consumer would.
  await page.goto("/api-test");
  await page.getByLabel("Application", { exact: true }).selectOption({ label: `Echo Flow (${slug})` });
  await expect(page.getByLabel("App Slug")).toHaveValue(slug);
  await page.getByLabel("Input", { exact: true }).fill("hello from the console");
  await page.getByRole("button", { name: "Test Completion" }).click();
  const completion = page.getByRole("region", { name: "Completion result" });
  await expect(completion).toContainText("webhook says:");
  await expect(completion).toContainText("hello from the console");
  const usage = completion.getByLabel("Token usage");
  await expect(usage).toContainText("Input Tokens3");
  await expect(usage).toContainText("Output Tokens4");
  await expect(usage).toContainText("Total Tokens7");
});
