import { mkdirSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { newPerson, signUp } from "./fixtures.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shots = path.join(root, ".tmp/test-results/screenshots");

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A receiver on loopback that fails the first request (500) and accepts every one after (200). */
async function startReceiver() {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answered = received.length === 0 ? 500 : 200;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), answered });
      response.writeHead(answered, { "content-type": "text/plain" });
      response.end(answered === 500 ? "receiver not ready" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/promptmint`, received, close: () => server.close() };
}

test("a creator adds a webhook endpoint, sends a test event that fails, redelivers it, and the receiver verifies both", async ({
  page,
}) => {
  const receiver = await startReceiver();
  try {
    await signUp(page, newPerson());
    await expect(page).toHaveURL(/\/dashboard$/);

    await page.getByRole("button", { name: "User menu" }).click();
    await page.getByRole("menuitem", { name: "Webhooks" }).click();
    await expect(page.getByRole("heading", { name: "Webhooks", level: 1 })).toBeVisible();
    await expect(page.getByRole("heading", { name: "No webhook endpoints" })).toBeVisible();

    // Only payouts: nothing the journey does sends one, so the receiver hears only the test event.
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("Description (optional)").fill("Local receiver");
    await page.getByRole("checkbox", { name: "All events (including types added later)" }).uncheck();
    await page.getByRole("checkbox", { name: "payout.paid" }).check();
    await page.getByRole("button", { name: "Add Endpoint" }).click();

    const secret = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "I've saved it" }).click();
    const endpoint = page
      .getByRole("listitem")
      .filter({ has: page.getByRole("heading", { name: receiver.url }) });
    await expect(endpoint.getByText("payout.paid")).toBeVisible();

    // The secret revealed again is the one shown at creation.
    await endpoint.getByRole("button", { name: "Signing secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Signing secret" });
    await expect(dialog.getByRole("textbox", { name: "Signing secret" })).toHaveValue(secret);
    await dialog.getByRole("button", { name: "Done" }).click();

    await endpoint.getByRole("button", { name: "Send test event" }).click();
    const log = page
      .getByRole("listitem")
      .filter({ has: page.getByRole("button", { name: /^webhook\.test/ }) });
    const summary = log.getByRole("button", { name: /^webhook\.test/ });
    await expect(summary).toHaveAttribute("aria-expanded", "true");
    await expect(log.getByText("HTTP 500")).toBeVisible();
    await expect(log.getByText("receiver not ready")).toBeVisible();
    await expect(endpoint.getByText(/^Failing since/)).toBeVisible();
    const sentBefore = receiver.received.length;

    await log.getByRole("button", { name: /^Redeliver webhook\.test/ }).click();
    await expect(summary.getByText("Delivered")).toBeVisible();
    await expect(log.getByText("HTTP 200")).toBeVisible();
    await expect(endpoint.getByText(/^Failing since/)).toHaveCount(0);
    expect(receiver.received.length).toBeGreaterThan(sentBefore);
    expect(receiver.received.at(-1)?.answered).toBe(200);

    // Both requests (and a scheduled retry, should one have come first) are one event: the same
    // webhook-id, each signed with the secret the page showed.
    const [first, ...rest] = receiver.received;
    expect(first?.answered).toBe(500);
    expect(rest.length).toBeGreaterThanOrEqual(1);
    const ids = new Set(receiver.received.map((request) => request.headers["webhook-id"]));
    expect([...ids]).toHaveLength(1);
    expect([...ids][0]).toMatch(/^test_/);
    const webhook = new Webhook(secret);
    for (const request of receiver.received) {
      const event = webhook.verify(request.body, request.headers as Record<string, string>) as {
        type: string;
      };
      expect(event.type).toBe("webhook.test");
    }
    await expect(summary).toContainText(String(receiver.received[0]?.headers["webhook-id"]));

    // For people to look at: the endpoint and its delivery log, at desktop and at phone width.
    mkdirSync(shots, { recursive: true });
    await page.mouse.move(0, 0);
    await expect(page.locator("[data-sonner-toast]")).toHaveCount(0, { timeout: 15_000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, "webhooks-desktop.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(log.getByText("HTTP 200")).toBeVisible();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, "webhooks-phone.png"), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  } finally {
    receiver.close();
  }
});
