import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type APIRequestContext, type Download, expect, type Page, test } from "@playwright/test";
import { strFromU8, unzipSync } from "fflate";
import { newPerson, signUp } from "./fixtures.ts";

// The downloaded apps run on these ports (the e2e servers use E2E_PORT and the one after it).
const APP_PORTS = { chat: 4220, completion: 4221 };
const children: ChildProcess[] = [];
let workDir: string;

test.beforeAll(() => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "pm-e2e-download-"));
});
test.afterAll(() => {
  for (const child of children) child.kill();
  rmSync(workDir, { recursive: true, force: true });
});

/** The signed-in creator's calls to the API, with the token the SPA keeps. */
async function creatorApi(page: Page) {
  const token = await page.evaluate(() => localStorage.getItem("token"));
  const headers = { authorization: `Bearer ${token}` };
  return {
    async post(request: APIRequestContext, url: string, data: unknown) {
      const response = await request.post(url, { headers, data });
      expect(response.ok(), await response.text()).toBe(true);
      return response.json();
    },
    async patch(request: APIRequestContext, url: string, data: unknown) {
      const response = await request.patch(url, { headers, data });
      expect(response.ok(), await response.text()).toBe(true);
      return response.json();
    },
    async delete(request: APIRequestContext, url: string) {
      const response = await request.delete(url, { headers });
      expect(response.ok(), await response.text()).toBe(true);
    },
  };
}

/** Unzips a downloaded package into its own folder and gives it an .env holding `apiKey`. */
function unpack(download: string, apiKey: string): string {
  const files = unzipSync(readFileSync(download));
  const [top] = Object.keys(files)[0]?.split("/") ?? [];
  for (const [name, data] of Object.entries(files)) {
    const file = path.join(workDir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, data);
  }
  const folder = path.join(workDir, top ?? "");
  const example = strFromU8(files[`${top}/.env.example`] ?? new Uint8Array());
  writeFileSync(
    path.join(folder, ".env"),
    example.replace(/^PROMPTMINT_API_KEY=$/m, `PROMPTMINT_API_KEY=${apiKey}`),
  );
  return folder;
}

/** `node server.mjs` in the unpacked folder; resolves once it listens. */
async function startApp(folder: string, port: number): Promise<string> {
  const child = spawn(process.execPath, ["server.mjs"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (output.includes("Listening on")) resolve();
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("exit", (code) => reject(new Error(`server.mjs exited with ${code}: ${output}`)));
  });
  return `http://127.0.0.1:${port}`;
}

async function saveDownload(download: Download): Promise<string> {
  const file = path.join(workDir, download.suggestedFilename());
  await download.saveAs(file);
  return file;
}

test("a creator downloads the chat and completion apps, runs them with a key, and they answer", async ({
  page,
  context,
}) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const api = await creatorApi(page);
  const id = Date.now().toString(36);

  const chat = await api.post(page.request, "/api/app/", {
    name: `Tea Chat ${id}`,
    description: "Talks about tea.",
    interaction_mode: "chat",
  });
  const completion = await api.post(page.request, "/api/app/", {
    name: `Tea Writer ${id}`,
    description: "Writes about any tea.",
  });
  await api.patch(page.request, `/api/app/${completion.slug}/prompt/`, {
    prompt_template: "Write about {{topic}}.",
    input_schema: {
      type: "object",
      properties: { topic: { type: "string", description: "The tea to write about" } },
      required: ["topic"],
    },
  });
  // The owner's own calls are free, so the creator's key needs no wallet.
  const { key, id: keyId } = await api.post(page.request, "/api/keys/", { name: "Downloaded apps" });

  // Chat: from the application's detail page.
  await page.goto(`/applications/${chat.slug}`);
  await expect(page.getByRole("heading", { name: chat.name, level: 1 })).toBeVisible();
  const chatDownload = page.waitForEvent("download");
  await page.getByRole("button", { name: "Download App" }).click();
  const chatZip = await chatDownload;
  expect(chatZip.suggestedFilename()).toBe(`${chat.slug}-chat-app.zip`);
  await expect(page.getByRole("button", { name: "Download App" })).toBeEnabled();
  const chatUrl = await startApp(unpack(await saveDownload(chatZip), key), APP_PORTS.chat);

  const chatPage = await context.newPage();
  await chatPage.goto(chatUrl);
  await expect(chatPage.getByRole("heading", { name: chat.name, level: 1 })).toBeVisible();
  await expect(chatPage.getByText("Talks about tea.")).toBeVisible();
  await chatPage.getByRole("textbox", { name: "Message" }).fill("Which water temperature?");
  await chatPage.getByRole("button", { name: "Send" }).click();
  const conversation = chatPage.getByRole("region", { name: "Conversation" });
  await expect(conversation.getByRole("listitem", { name: "Assistant" })).toHaveText(
    "[sandbox gpt4] Which water temperature?",
  );
  await chatPage.getByRole("textbox", { name: "Message" }).fill("And how long?");
  await chatPage.getByRole("textbox", { name: "Message" }).press("Enter");
  await expect(conversation.getByRole("listitem", { name: "Assistant" })).toHaveCount(2);
  await expect(conversation.getByRole("listitem", { name: "You" }).nth(1)).toHaveText("And how long?");

  // Completion: from the dashboard's row action.
  await page.goto("/dashboard");
  const row = page.getByRole("row", { name: new RegExp(completion.name) });
  const completionDownload = page.waitForEvent("download");
  await row.getByRole("button", { name: "Download" }).click();
  const completionZip = await completionDownload;
  expect(completionZip.suggestedFilename()).toBe(`${completion.slug}-completion-app.zip`);
  const completionUrl = await startApp(unpack(await saveDownload(completionZip), key), APP_PORTS.completion);

  const completionPage = await context.newPage();
  await completionPage.goto(completionUrl);
  await expect(completionPage.getByRole("heading", { name: completion.name, level: 1 })).toBeVisible();
  await completionPage.getByLabel("The tea to write about").fill("oolong");
  await completionPage.getByRole("button", { name: "Generate" }).click();
  await expect(completionPage.getByRole("region", { name: "Result" })).toContainText(
    "[sandbox gpt4] Write about oolong.",
  );
  await expect(completionPage.getByRole("alert")).toBeHidden();

  // A revoked key: the page says what went wrong instead of failing silently.
  await api.delete(page.request, `/api/keys/${keyId}/`);
  await completionPage.getByRole("button", { name: "Generate" }).click();
  await expect(completionPage.getByRole("alert")).toContainText("Error 401");
  await expect(completionPage.getByRole("alert")).toContainText("PROMPTMINT_API_KEY");
});
