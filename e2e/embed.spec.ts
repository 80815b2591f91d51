import http from "node:http";
import { expect, test } from "@playwright/test";
import { createLiveApp, newPerson, signUp, topUpFromZero } from "./fixtures.ts";

const ALLOWED_PORT = 4230;
const OTHER_PORT = 4231;

/** A stranger's website on loopback: one page with the creator's snippet pasted in. */
function startHostSite(port: number, snippet: string): Promise<http.Server> {
  const html = `<!doctype html><html><head><title>Tea Shop ${port}</title></head>
<body><h1>Tea Shop on port ${port}</h1>${snippet}</body></html>`;
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(html);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

test("a creator embeds a chat widget on an allowed site; another site cannot use it", async ({
  page,
  baseURL,
  request,
}) => {
  test.setTimeout(120_000);
  // Loopback sites on their own ports: other origins (and another site) than the server's localhost.
  const allowedOrigin = `http://127.0.0.1:${ALLOWED_PORT}`;
  const otherOrigin = `http://127.0.0.1:${OTHER_PORT}`;

  // The creator makes a live, embeddable chat app at 10 cents a call (the starter model's worst
  // case, 1000 tokens of gpt4, needs at least 7).
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Tea Helper ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, mode: "chat", visibility: "embed", priceCents: 10 });
  const appUrl = page.url();

  // The panel says who pays; the creator tops up their own wallet in the sandbox.
  const embed = page.locator("div.rounded-xl", {
    has: page.getByRole("heading", { name: "Embed on Your Site" }),
  });
  await expect(embed.getByRole("note").first()).toContainText(
    "Calls from the widget are charged to your wallet at the app's price per call ($0.10)",
  );
  await expect(embed).toContainText("Your wallet balance: $0.00");
  await embed.getByRole("link", { name: "Top Up Wallet" }).click();
  await expect(page).toHaveURL(/\/wallet$/);
  await topUpFromZero(page, 10);

  // Back on the app: allow one site and copy the snippet.
  await page.goto(appUrl);
  await expect(embed).toContainText("Your wallet balance: $10.00");
  await embed.getByLabel("Allowed origins").fill(allowedOrigin);
  await embed.getByRole("button", { name: "Save Allowed Origins" }).click();
  await expect(page.getByText("Allowed origins saved")).toBeVisible();
  const snippet = (await embed.getByLabel("Embed snippet").textContent()) ?? "";
  expect(snippet).toContain(`${baseURL}/embed.js`);

  const allowedSite = await startHostSite(ALLOWED_PORT, snippet);
  const otherSite = await startHostSite(OTHER_PORT, snippet);
  try {
    // A visitor on the allowed site chats with the widget.
    await page.goto(`${allowedOrigin}/`);
    await expect(page.getByRole("heading", { name: `Tea Shop on port ${ALLOWED_PORT}` })).toBeVisible();
    const widget = page.frameLocator(`iframe[title="Assistant"]`);
    await widget.getByLabel("Message").fill("Which tea goes with breakfast?");
    await widget.getByRole("button", { name: "Send" }).click();
    const conversation = widget.getByRole("log", { name: "Conversation" });
    await expect(conversation.locator("li.assistant")).toContainText("Which tea goes with breakfast?");
    await expect(conversation.locator("li.assistant")).toContainText("[sandbox");
    const config = (await widget.locator("#promptmint-embed").textContent()) ?? "{}";
    const token = JSON.parse(config).token as string;
    expect(token).toBeTruthy();

    // The same snippet on a site that is not allowed shows no widget...
    await page.goto(`${otherOrigin}/`);
    await expect(page.getByRole("heading", { name: `Tea Shop on port ${OTHER_PORT}` })).toBeVisible();
    await expect(page.locator(`iframe[title="Assistant"]`)).toBeAttached();
    await expect(
      page.frameLocator(`iframe[title="Assistant"]`).getByRole("button", { name: "Send" }),
    ).toHaveCount(0);

    // ...and the first site's token is refused from there: the browser may not even send it...
    const fromOtherSite = await page.evaluate(
      async ({ url, token }) => {
        try {
          const response = await fetch(url, {
            method: "POST",
            headers: { authorization: `Embed ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ query: "Free calls?" }),
          });
          return `answered ${response.status}`;
        } catch {
          return "refused";
        }
      },
      { url: `${baseURL}/api/embed/${slug}/messages`, token },
    );
    expect(fromOtherSite).toBe("refused");
    // ...and the server says 403 to a request from that origin.
    const direct = await request.post(`/api/embed/${slug}/messages`, {
      headers: { authorization: `Embed ${token}`, origin: otherOrigin },
      data: { query: "Free calls?" },
    });
    expect(direct.status()).toBe(403);
    expect((await direct.json()).message).toBe(`Requests from ${otherOrigin} may not use this embed token`);
  } finally {
    allowedSite.close();
    otherSite.close();
  }

  // The creator paid for the one answered call.
  await page.goto("/wallet");
  await expect(page.getByRole("region", { name: "Balances" })).toContainText("$9.90");
});
