import http from "node:http";
import type { AddressInfo } from "node:net";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, type Page, test } from "@playwright/test";
import { createLiveApp, newPerson, signUp, submitSignIn, topUpFromZero } from "./fixtures.ts";

/**
 * An MCP client on another origin signs a person in with the MCP SDK's own OAuth client
 * (`auth()`): registration, PKCE, the issuer's sign-in and consent pages in Chromium, and the
 * browser sent back to the client's loopback listener, which Chromium allows only if the consent
 * page's CSP `form-action` lets the form's redirects end there (docs/decisions/051). Then the
 * client calls a paid tool with its token, charged once.
 */

/** The client's loopback listener: its OAuth callback, on another origin than Promptmint's. */
async function startClientOrigin() {
  const codes: string[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return response.writeHead(404).end();
    const code = url.searchParams.get("code");
    if (code) codes.push(code);
    response
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(`<!doctype html><title>Desk Agent</title><h1>${code ? "Signed in" : "Not signed in"}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, codes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The client's OAuth state, kept in memory; opening the authorization URL is left to the test. */
class DeskAgentProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  verifier = "";
  readonly redirectUrl: string;
  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Desk Agent",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Every Content-Security-Policy report Chromium writes to the console of `page`. */
function watchCsp(page: Page): string[] {
  const reports: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) reports.push(message.text());
  });
  return reports;
}

test("an MCP client on another origin signs in through the consent page and calls a paid tool, charged once", async ({
  page,
  browser,
  baseURL,
}) => {
  const creator = newPerson();
  const consumer = newPerson();
  const client = await startClientOrigin();
  try {
    // A creator's live app at $0.50 a call; a consumer with $10 in their wallet.
    await signUp(page, creator);
    await expect(page).toHaveURL(/\/dashboard$/);
    const slug = await createLiveApp(page, { name: "Haiku Desk", priceCents: 50 });
    const consumerContext = await browser.newContext({ baseURL });
    const wallet = await consumerContext.newPage();
    await signUp(wallet, consumer);
    await expect(wallet).toHaveURL(/\/dashboard$/);
    await wallet.goto("/wallet");
    await topUpFromZero(wallet, 10);

    // In the "x402" project both agent rails are on: the app's paid calls offer x402 and MPP to
    // agents without credentials, and the MCP URL must still ask a client to sign in.
    if (test.info().project.name === "x402") {
      const challenge = await consumerContext.request.post(`/api/app/${slug}/completion-messages`, {
        headers: { authorization: "" },
        data: { inputs: {}, query: "hi", response_mode: "blocking", user: "agent" },
      });
      // This server's x402 facilitator is unreachable, so x402 cannot be offered now; MPP still is
      // (a rail that cannot make its challenge does not hide the others).
      expect(challenge.status()).toBe(402);
      expect(challenge.headers()["www-authenticate"]).toMatch(/^Payment /);
      expect(challenge.headers()["payment-required"]).toBeUndefined();
    }

    // The MCP client connects without a token. The endpoint's 401 (also with x402 on, in the
    // "x402" project: docs/decisions/074) starts the SDK's own OAuth client: it registers itself
    // and asks for authorization (PKCE, the endpoint as resource).
    const serverUrl = new URL(`${baseURL}/api/app/${slug}/mcp`);
    const provider = new DeskAgentProvider(`${client.origin}/callback`);
    const signingIn = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await expect(new Client({ name: "desk-agent", version: "1.0.0" }).connect(signingIn)).rejects.toThrow(
      /Unauthorized/,
    );
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get("resource")).toBe(serverUrl.toString());
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");

    // The person, in the browser the client opened: signs in, reads the consent page, allows.
    const agentContext = await browser.newContext();
    const agentPage = await agentContext.newPage();
    const cspReports = watchCsp(agentPage);
    await agentPage.goto(authorizationUrl.toString());
    await submitSignIn(agentPage, consumer);
    await expect(
      agentPage.getByRole("heading", { name: "Allow Desk Agent to call paid apps?" }),
    ).toBeVisible();
    await expect(agentPage.getByText(new URL(client.origin).host)).toBeVisible();
    await agentPage.getByRole("button", { name: "Allow" }).click();

    // Chromium followed the form's redirects to the client's origin: its callback has the code.
    await expect(agentPage).toHaveURL(new RegExp(`^${client.origin}/callback\\?code=`));
    await expect(agentPage.getByRole("heading", { name: "Signed in" })).toBeVisible();
    expect(cspReports).toEqual([]);
    expect(client.codes).toHaveLength(1);

    // The client exchanges the code and calls the paid tool with its token.
    await signingIn.finishAuth(client.codes[0] as string);
    expect(provider.saved?.access_token).toBeTruthy();
    const mcp = new Client({ name: "desk-agent", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    const [tool] = (await mcp.listTools()).tools;
    expect(tool?.description).toContain("Costs $0.50 per call");
    const result = (await mcp.callTool({ name: slug, arguments: { query: "rain" } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result._meta?.["promptmint/charge"]).toMatchObject({ charged_cents: 50, paid_by: "wallet" });
    await mcp.close();

    // A web MCP client on that origin reaches the same endpoint from the page (CORS, preflighted).
    const fromPage = await agentPage.evaluate(
      async ({ url, token }) => {
        const metadataUrl = `${new URL(url).origin}/.well-known/oauth-protected-resource${new URL(url).pathname}`;
        const metadata = await (await fetch(metadataUrl)).json();
        const listed = await fetch(url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        return { resource: metadata.resource, status: listed.status, body: await listed.json() };
      },
      { url: serverUrl.toString(), token: provider.saved?.access_token as string },
    );
    expect(fromPage.resource).toBe(serverUrl.toString());
    expect(fromPage.status).toBe(200);
    expect(fromPage.body.result.tools[0].name).toBe(slug);
    expect(cspReports).toEqual([]);

    // Charged exactly once: $0.50 out of the wallet, one line in its statement.
    await wallet.goto("/wallet");
    await expect(wallet.getByRole("region", { name: "Balances" })).toContainText("$9.50");
    const statement = wallet.getByRole("table", { name: "Statement" });
    await expect(statement).toContainText("-$0.50");
    await expect(statement.getByRole("row").filter({ hasText: "-$0.50" })).toHaveCount(1);
    await agentContext.close();
    await consumerContext.close();
  } finally {
    await client.close();
  }
});
