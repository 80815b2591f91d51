import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, type Page, test } from "@playwright/test";
import { newPerson, signUp } from "./fixtures.ts";

// A workflow app's Experiments page (docs/decisions/058, "Workflow apps"; 079: the shared releases
// pages): two versions on two provider apps (two loopback webhooks), split 50/50 and rolled back.
const hooks: Server[] = [];
const urls: string[] = [];

test.beforeAll(async () => {
  for (const name of ["first", "second"]) {
    const hook = createServer((request, response) => {
      request.resume();
      request.on("end", () =>
        response
          .writeHead(200, { "Content-Type": "application/json" })
          .end(JSON.stringify({ answer: `${name} hook`, usage: { input_tokens: 1, output_tokens: 2 } })),
      );
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    hooks.push(hook);
    urls.push(`http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`);
  }
});

test.afterAll(async () => {
  for (const hook of hooks) await new Promise<void>((resolve) => hook.close(() => resolve()));
});

async function saveEndpoint(page: Page, url: string) {
  await page.getByRole("tab", { name: "Provider Config" }).click();
  await page.getByLabel("Provider", { exact: true }).selectOption("webhook");
  await page.getByRole("textbox", { name: "Endpoint URL" }).fill(url);
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
}

test("a creator splits a workflow app's traffic between two provider apps and rolls back in one click", async ({
  page,
}, testInfo) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  await page.goto("/applications/create?type=workflow");
  await page.getByLabel("Application Name").fill("Split Flow");
  await page.getByLabel("Description").fill("Two provider apps, one experiment.");
  await page.getByLabel("App ID").fill("split-app");
  await page.getByLabel("API Key").fill("sk-split-secret-1234");
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page).toHaveURL(/\/applications\/[a-z0-9-]+$/);
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";

  // v2: the first webhook, in production; the app goes live; v3: the second, saved but not released.
  await page.goto(`/workflows/${slug}`);
  await saveEndpoint(page, urls[0] ?? "");
  await expect(page.getByText("Changes saved")).toBeVisible();
  await page.getByRole("tab", { name: "Basic Settings" }).click();
  await page.getByLabel("Status").selectOption("live");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await page
    .getByRole("dialog", { name: "Save a new version" })
    .getByRole("button", { name: "Save version" })
    .click();
  await expect(page.getByRole("main").locator("header").getByText("live", { exact: true })).toBeVisible();
  await page.getByRole("textbox", { name: "Endpoint URL" }).waitFor({ state: "detached" });
  await saveEndpoint(page, urls[1] ?? "");
  await expect(page.getByText("Changes saved as v3; callers get v2 until you promote it")).toBeVisible();

  // The Experiments page, linked from the editor: production v2 against v3, 50/50.
  await page
    .getByRole("navigation", { name: "Workflow app pages" })
    .getByRole("link", { name: "Experiments" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/workflows/${slug}/experiments$`));
  await expect(page.getByText("Start an experiment")).toBeVisible();
  await expect(page.getByLabel("Arm 1 version")).toHaveValue("2");
  await page.getByLabel("Arm 2 version").selectOption("3");
  await page.getByRole("button", { name: "Start experiment" }).click();
  await expect(page.getByText("Experiment started")).toBeVisible();
  await expect(page.getByText("Running experiment")).toBeVisible();
  await expect(page.getByText(/Workflow calls have no model cost from Promptmint/)).toBeVisible();
  const table = page.getByRole("table");
  await expect(table.getByRole("row", { name: /Calls/ })).toBeVisible();
  await expect(table.getByRole("row", { name: /Model cost/ })).toHaveCount(0);
  const path = testInfo.outputPath("workflow-experiment-1280.png");
  await page.screenshot({ path, fullPage: true });
  await testInfo.attach("workflow-experiment-1280", { path, contentType: "image/png" });

  await page.getByRole("button", { name: "Roll back" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("production returns to v2");
  await dialog.getByRole("button", { name: "Roll back" }).click();
  await expect(page.getByText("Production is back on v2")).toBeVisible();
  await expect(page.getByText("Start an experiment")).toBeVisible();
  await expect(page.getByText("Rolled back", { exact: true })).toBeVisible();
});
