import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, expect, type Locator, type Page, type TestInfo, test } from "@playwright/test";
import pg from "pg";
import {
  completeSignUp,
  createApiKey,
  createLiveApp,
  newPerson,
  type Person,
  signUp,
  topUpFromZero,
} from "./fixtures.ts";

/**
 * Issue 43, organizations, as the people in it use them: an owner creates one from the account
 * switcher and invites a developer by email; the developer signs up from the mailed link and joins;
 * the owner tops up the organization's wallet and sets the developer's monthly budget; the developer
 * makes an organization key with a spend limit and a program calls a paid app with it; the calls
 * are on the organization's usage (by member, key and app) and statement, on nobody's personal
 * wallet; the owner removes the developer and the key stops working on every API process within 5 s.
 *
 * With TEST_DATABASE_URL (CI) the file starts its own two API processes on a fresh PostgreSQL
 * database (the second with the first's PUBLIC_URL, so one sign-in is good on both, as behind a
 * load balancer) and the journey runs against the first; the key is then called on both. Without
 * it the journey runs on the config's default e2e server (PGlite: one process) and the key is
 * checked there only.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PRICE_CENTS = 25;

interface ApiProcess {
  url: string;
  child: ChildProcess;
  dataDir: string;
}

/** The processes the journey runs on (first) and the key is checked on (all); none without TEST_DATABASE_URL. */
let processes: ApiProcess[] = [];
let databaseName: string | undefined;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** `node apps/api/src/main.ts` (the built web app included) on `databaseUrl`, answered once ready. */
async function startApiProcess(databaseUrl: string, publicUrl?: string): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-e2e-org-"));
  const child = spawn(process.execPath, ["apps/api/src/main.ts"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      PORT: String(port),
      PUBLIC_URL: publicUrl ?? url,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      // One key for both: a token one process's issuer signed is good on the other.
      SECRET_KEY: "e2e-organizations-secret-key-0123456789abcdef",
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      ALLOW_PRIVATE_UPSTREAMS: "true",
      GATEWAY_SPEND_PER_MINUTE_CENTS: "1000000",
      PAYOUT_SCHEDULE: "manual",
    },
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API process on ${url} exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { url, child, dataDir };
    if (Date.now() > deadline) throw new Error(`API process on ${url} not ready after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test.beforeAll(async () => {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return;
  test.setTimeout(180_000);
  databaseName = `pm_e2e_org_${randomBytes(5).toString("hex")}`;
  await adminQuery(adminUrl, `create database ${databaseName}`);
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${databaseName}`;
  // The first migrates the new database; the second starts on it, naming the first as its issuer.
  const first = await startApiProcess(databaseUrl.toString());
  processes = [first, await startApiProcess(databaseUrl.toString(), first.url)];
});

test.afterAll(async () => {
  for (const { child, dataDir } of processes) {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  processes = [];
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl && databaseName)
    await adminQuery(adminUrl, `drop database if exists ${databaseName} with (force)`);
});

/** Where the browser goes: the first own process, or the config's server. */
function baseUrlOf(testInfo: TestInfo): string {
  return processes[0]?.url ?? (testInfo.project.use.baseURL as string);
}

async function newPage(browser: Browser, baseURL: string, size: { width: number; height: number }) {
  const context = await browser.newContext({ baseURL, viewport: size });
  return context.newPage();
}

const isPhone = (page: Page) => (page.viewportSize()?.width ?? 1280) < 1024;

/** Opens the account choices: the bar's switcher on a wide screen, the menu on a phone. */
async function openAccounts(page: Page): Promise<Locator> {
  if (isPhone(page)) {
    await page.getByRole("button", { name: "Open menu" }).click();
    return page.locator("#mobile-menu");
  }
  await page.getByRole("button", { name: /^Acting as .*: switch account$/ }).click();
  return page.getByRole("menu");
}

async function closeAccounts(page: Page): Promise<void> {
  if (isPhone(page)) await page.getByRole("button", { name: "Close menu" }).click();
  else await page.keyboard.press("Escape");
}

/** The nav says who acts: "Acting as Personal" or "Acting as Acme · developer". */
async function expectActingAs(page: Page, text: string): Promise<void> {
  if (!isPhone(page)) {
    const switcher = page.getByRole("button", { name: `Acting as ${text}: switch account` });
    await expect(switcher).toBeVisible();
    await expect(switcher).toContainText(`Acting as${text}`);
    return;
  }
  const accounts = await openAccounts(page);
  await expect(accounts.getByRole("heading", { name: `Acting as ${text}` })).toBeVisible();
  await closeAccounts(page);
}

async function actAsPersonal(page: Page): Promise<void> {
  const accounts = await openAccounts(page);
  if (isPhone(page)) await accounts.getByRole("button", { name: "Personal" }).click();
  else await accounts.getByRole("menuitemradio", { name: "Personal" }).click();
  await expectActingAs(page, "Personal");
}

/** The link of the newest mail to `email` labelled `label`, from the development outbox. */
async function mailedLink(baseUrl: string, email: string, label: string): Promise<string> {
  let url: string | undefined;
  await expect(async () => {
    const response = await fetch(`${baseUrl}/oidc/dev/outbox.json`);
    const { messages } = (await response.json()) as {
      messages: { to: string; links: { label: string; url: string }[] }[];
    };
    url = messages
      .find((message) => message.to === email.toLowerCase())
      ?.links.find((link) => link.label === label)?.url;
    expect(url).toBeTruthy();
  }).toPass({ timeout: 10_000 });
  return url as string;
}

/** A developer's program: one blocking completion with the key; answers the status and what it charged. */
async function callWithKey(baseUrl: string, slug: string, apiKey: string) {
  const response = await fetch(`${baseUrl}/api/app/${slug}/completion-messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      inputs: { query: "Summarise our quarter" },
      response_mode: "blocking",
      user: "ci",
    }),
  });
  const body = (await response.json()) as {
    metadata?: { usage?: { paid_by: string; charged_cents: number } };
  };
  return { status: response.status, usage: body.metadata?.usage };
}

/** The wallet page's balance plus what calls in flight still hold (leases return within seconds). */
async function walletMoney(page: Page): Promise<number> {
  const balances = page.getByRole("region", { name: "Balances" });
  await expect(balances).toContainText("Balance$");
  const figures = /Balance\$(\d+\.\d\d)(?:On hold\$(\d+\.\d\d))?/.exec((await balances.textContent()) ?? "");
  return Number(figures?.[1]) + Number(figures?.[2] ?? 0);
}

/** A personal wallet that never paid: nothing on it, nothing in its statement, no receipt. */
async function expectUntouchedWallet(page: Page, appName: string): Promise<void> {
  await page.goto("/wallet");
  await expect(page.getByRole("heading", { name: "Wallet", level: 1 })).toBeVisible();
  expect(await walletMoney(page)).toBe(0);
  await expect(page.getByText("Top-ups and paid calls will appear here.")).toBeVisible();
  await expect(page.getByText(appName)).toHaveCount(0);
  await expect(page.getByText("No receipts yet")).toBeVisible();
}

async function noOverflow(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

function tab(page: Page, name: string): Locator {
  return page.getByRole("tablist", { name: "Organization sections" }).getByRole("tab", { name });
}

for (const size of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test(`an organization's owner invites a developer who calls with a budgeted key, until removed (${size.width} px)`, async ({
    browser,
  }, testInfo) => {
    test.setTimeout(180_000);
    const baseUrl = baseUrlOf(testInfo);
    const tag = `${size.width}-${Date.now().toString(36)}`;
    const appName = `Org Target ${tag}`;
    const organization = `Acme ${tag}`;
    const owner = newPerson();
    const developer: Person = newPerson();
    const shot = (name: string) => testInfo.outputPath(`${name}-${size.width}.png`);

    // A creator sells a 25-cent app (public and live).
    const creator = await newPage(browser, baseUrl, size);
    await signUp(creator, newPerson());
    await expect(creator).toHaveURL(/\/dashboard$/);
    const slug = await createLiveApp(creator, { name: appName, priceCents: PRICE_CENTS });
    await creator.context().close();

    // The owner creates the organization from the account switcher and acts for it.
    const ownerPage = await newPage(browser, baseUrl, size);
    await signUp(ownerPage, owner);
    await expect(ownerPage).toHaveURL(/\/dashboard$/);
    await expectActingAs(ownerPage, "Personal");
    const choices = await openAccounts(ownerPage);
    await choices
      .getByRole(isPhone(ownerPage) ? "link" : "menuitem", { name: "Create organization" })
      .click();
    const createForm = ownerPage.getByRole("form", { name: "Create organization" });
    await expect(createForm.getByLabel("Name")).toBeFocused();
    await createForm.getByLabel("Name").fill(organization);
    await createForm.getByRole("button", { name: "Create organization" }).click();
    await expect(ownerPage.getByRole("heading", { name: organization, level: 1 })).toBeVisible();
    const organizationPath = new URL(ownerPage.url()).pathname;
    await ownerPage.getByRole("button", { name: `Act as ${organization}` }).click();
    await expectActingAs(ownerPage, `${organization} · owner`);
    const switcher = await openAccounts(ownerPage);
    await expect(
      switcher.getByRole(isPhone(ownerPage) ? "button" : "menuitemradio", { name: `${organization} owner` }),
    ).toBeVisible();
    await ownerPage.screenshot({ path: shot("switcher") });
    await closeAccounts(ownerPage);

    // It invites the developer by email.
    await tab(ownerPage, "Invitations").click();
    const invite = ownerPage.getByRole("form", { name: "Invite a member" });
    await invite.getByLabel("Email").fill(developer.email);
    await invite.getByLabel("Role").selectOption("developer");
    await invite.getByRole("button", { name: "Send invitation" }).click();
    await expect(invite.getByText(`Invitation sent to ${developer.email.toLowerCase()}.`)).toBeVisible();
    await expect(ownerPage.getByRole("list", { name: "Pending invitations" })).toContainText(developer.email);

    // A billing step: the owner tops up the organization's wallet with the sandbox card.
    await ownerPage.goto("/wallet");
    await topUpFromZero(ownerPage, 10);
    await expect(
      ownerPage.getByRole("table", { name: "Receipts" }).getByRole("row", { name: /Top-up/ }),
    ).toContainText("$10.00");

    // The developer opens the mailed link, signs up from it, is back on the invitation and joins.
    const link = await mailedLink(baseUrl, developer.email, "Accept the invitation");
    const developerPage = await newPage(browser, baseUrl, size);
    await developerPage.goto(link);
    await developerPage.getByRole("link", { name: "Create an account" }).click();
    await completeSignUp(developerPage, developer);
    await expect(developerPage).toHaveURL(new URL(link).pathname);
    await expect(developerPage.getByRole("heading", { name: organization, level: 2 })).toBeVisible();
    await developerPage.getByRole("button", { name: `Join ${organization}` }).click();
    await expect(developerPage).toHaveURL(organizationPath);
    await developerPage.getByRole("button", { name: `Act as ${organization}` }).click();
    await expectActingAs(developerPage, `${organization} · developer`);

    // The owner sets the developer's monthly budget on the Members tab.
    await ownerPage.goto(organizationPath);
    const members = ownerPage.getByRole("list", { name: "Members" });
    const developerRow = members.getByRole("listitem").filter({ hasText: developer.email });
    await expect(developerRow).toBeVisible();
    await developerRow.getByLabel(`Monthly budget of ${developer.displayName} (USD)`).fill("5");
    const budgetSaved = ownerPage.waitForResponse(
      (response) => response.request().method() === "PATCH" && response.url().includes("/members/"),
    );
    await developerRow.getByRole("button", { name: "Save" }).click();
    expect((await budgetSaved).status()).toBe(200);
    await expect(developerRow.getByRole("status")).toHaveText("Budget saved");

    // The developer makes an organization key with a spend limit; their program calls the app.
    await developerPage.goto("/api-keys");
    await developerPage.getByLabel("Spend limit ($)").fill("2.00");
    const keyName = `Acme CI ${tag}`;
    const apiKey = await createApiKey(developerPage, keyName);
    // On every process: each then holds the key (and its maker's membership) in its lookup cache.
    const urls = processes.length > 0 ? processes.map((server) => server.url) : [baseUrl];
    for (const url of urls) {
      expect(await callWithKey(url, slug, apiKey)).toEqual({
        status: 200,
        usage: expect.objectContaining({ paid_by: "wallet", charged_cents: PRICE_CENTS }),
      });
    }
    const calls = urls.length;
    const charged = `$${((calls * PRICE_CENTS) / 100).toFixed(2)}`;

    // The organization's Usage tab: by member, by key, by app.
    await ownerPage.goto(`${organizationPath}?tab=usage`);
    for (const [table, name] of [
      ["By member", developer.displayName],
      ["By API key", keyName],
      ["By app", appName],
    ] as const) {
      const row = ownerPage.getByRole("table", { name: table }).getByRole("row").filter({ hasText: name });
      await expect(row.getByRole("cell")).toHaveText([name, String(calls), charged]);
    }
    await noOverflow(ownerPage);
    await ownerPage.screenshot({ path: shot("usage"), fullPage: true });

    // The budget's spend on the Members tab.
    await tab(ownerPage, "Members").click();
    await expect(developerRow).toContainText(`${charged} of $5.00 spent this month`);
    await noOverflow(ownerPage);
    await ownerPage.screenshot({ path: shot("members"), fullPage: true });

    // The organization's statement and receipts, on the Wallet page while acting for it.
    await ownerPage.goto("/wallet");
    const statement = ownerPage.getByRole("table", { name: "Statement" });
    await expect(statement.getByRole("row").filter({ hasText: appName })).toContainText(
      calls === 1 ? "1 call" : `${calls} calls`,
    );
    await expect(statement.getByRole("row", { name: /Wallet top-up/ })).toContainText("+$10.00");
    expect(await walletMoney(ownerPage)).toBeCloseTo(10 - (calls * PRICE_CENTS) / 100, 2);

    // Nobody's personal wallet paid: the owner's and the developer's, as themselves.
    await actAsPersonal(ownerPage);
    await expectUntouchedWallet(ownerPage, appName);
    await actAsPersonal(developerPage);
    await expectUntouchedWallet(developerPage, appName);

    // The owner removes the developer; their key stops working on every process within 5 s.
    await ownerPage.goto(organizationPath);
    await developerRow.getByRole("button", { name: `Remove ${developer.displayName}` }).click();
    const confirm = ownerPage.getByRole("dialog", { name: `Remove ${developer.displayName}?` });
    const removal = ownerPage.waitForResponse(
      (response) => response.request().method() === "DELETE" && response.url().includes("/members/"),
    );
    await confirm.getByRole("button", { name: "Remove" }).click();
    expect((await removal).status()).toBeLessThan(300);
    const removedAt = Date.now();
    await expect(confirm).toBeHidden();
    await expect(members).not.toContainText(developer.email);
    await Promise.all(
      urls.map(async (url) => {
        await expect
          .poll(async () => (await callWithKey(url, slug, apiKey)).status, {
            intervals: [50],
            timeout: 5_000,
          })
          .toBe(401);
        expect(Date.now() - removedAt).toBeLessThan(5_000);
      }),
    );
    await ownerPage.context().close();
    await developerPage.context().close();
  });
}
