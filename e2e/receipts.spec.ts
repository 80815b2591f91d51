import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { PDFDocument } from "pdf-lib";
import {
  callFromTestConsole,
  createApiKey,
  createLiveApp,
  newPerson,
  signUp,
  topUpFromZero,
} from "./fixtures.ts";

/** Issue 39 item 5: a consumer downloads a receipt (PDF) and their usage as CSV, and both say what happened. */
test("a consumer downloads a top-up's receipt and a usage CSV of their paid calls", async ({
  page,
  browser,
}, testInfo) => {
  test.setTimeout(180_000);
  // A creator publishes an app at 7 cents a call.
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Receipt Writer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, priceCents: 7 });

  // The consumer, in a browser of their own, tops up $10 and makes two paid calls with a key.
  const context = await browser.newContext({
    baseURL: testInfo.project.use.baseURL,
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
  });
  const consumer = await context.newPage();
  await signUp(consumer, newPerson());
  await expect(consumer).toHaveURL(/\/dashboard$/);
  await consumer.goto("/wallet");
  await topUpFromZero(consumer, 10);
  await consumer.goto("/api-keys");
  const apiKey = await createApiKey(consumer, "Receipts key");
  await callFromTestConsole(consumer, { slug, apiKey, input: "a receipt", times: 2 });

  // The receipt of the top-up: numbered, downloaded as PDF.
  await consumer.goto("/wallet");
  const receipts = consumer.getByRole("table", { name: "Receipts" });
  const row = receipts.getByRole("row", { name: /Top-up/ });
  await expect(row).toContainText("$10.00");
  await expect(row).toContainText("Paid");
  const number = (await row.getByRole("cell").first().textContent())?.trim() ?? "";
  expect(number).toMatch(/^PM-\d{6}$/);
  const pdfDownload = consumer.waitForEvent("download");
  await row.getByRole("button", { name: `Download receipt ${number} (PDF)` }).click();
  const pdf = await pdfDownload;
  expect(pdf.suggestedFilename()).toBe(`receipt-${number}.pdf`);
  const pdfBytes = readFileSync(await pdf.path());
  expect(pdfBytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  expect((await PDFDocument.load(pdfBytes)).getTitle()).toBe(`Receipt ${number}`);

  // The usage of today, for that key: one row per paid call at 7 cents.
  const today = new Date().toISOString().slice(0, 10);
  const exportCard = consumer
    .getByRole("heading", { name: "Download usage (CSV)" })
    .locator("xpath=../../..");
  await exportCard.getByLabel("From").fill(today);
  await exportCard.getByLabel("To (included)").fill(today);
  const keyOption = exportCard.getByLabel("API key").locator("option", { hasText: "Receipts key" });
  await expect(keyOption).toHaveCount(1);
  await exportCard.getByLabel("API key").selectOption((await keyOption.getAttribute("value")) ?? "");
  const csvDownload = consumer.waitForEvent("download");
  await exportCard.getByRole("button", { name: "Download usage (CSV)" }).click();
  const csv = await csvDownload;
  expect(csv.suggestedFilename()).toBe(`usage-${today}-to-${today}.csv`);
  const lines = readFileSync(await csv.path(), "utf8")
    .trim()
    .split("\r\n");
  expect(lines[0]).toBe(
    "call_id,time_utc,app_slug,app_name,api_key_name,api_key_prefix,mode,status,model,input_tokens,output_tokens,price_charged,currency",
  );
  expect(lines).toHaveLength(3);
  for (const line of lines.slice(1)) {
    const cells = line.split(",");
    expect(cells[2]).toBe(slug);
    expect(cells[3]).toBe(name);
    expect(cells[4]).toBe("Receipts key");
    expect(cells[7]).toBe("success");
    expect(cells.slice(-2)).toEqual(["0.07", "USD"]);
  }
  await context.close();
});
