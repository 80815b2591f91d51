import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { Browser } from "./oidc-client.ts";

/**
 * An MCP client's OAuth state kept in memory, as a desktop client keeps it on disk: its
 * registration, its tokens, the PKCE verifier, and the authorization URL it would open.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  private verifier = "";
  readonly redirectUrl: string;
  private readonly name: string;

  constructor(redirectUrl: string, name = "Desk Agent") {
    this.redirectUrl = redirectUrl;
    this.name = name;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
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

/**
 * What a person does in the browser the MCP client opened: signs in on the issuer's page, then
 * allows or denies on the consent page. Answers the consent page and where the issuer sent them.
 */
export async function answerAuthorization(
  authorizationUrl: URL,
  options: { email: string; password: string; redirectUrl: string; decision: "allow" | "deny" },
): Promise<{ consentHtml: string; callback: URL }> {
  const browser = new Browser();
  const atRedirect = (url: string) => url.startsWith(options.redirectUrl);
  const atInteraction = (url: string) => url.includes("/oidc/interaction/");
  const start = authorizationUrl.toString();
  const signIn = await browser.follow(await browser.request(start), start, atInteraction);
  if (!atInteraction(signIn.url)) throw new Error(`no sign-in page: ${signIn.response.status}`);
  const login = await browser.request(`${signIn.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: options.email, password: options.password }).toString(),
  });
  const consent = await browser.follow(
    login,
    `${signIn.url}/login`,
    (url) => atInteraction(url) || atRedirect(url),
  );
  if (!atInteraction(consent.url)) throw new Error(`no consent page: went to ${consent.url}`);
  const consentHtml = await (await browser.request(consent.url)).text();
  const decided = await browser.request(`${consent.url}/consent`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ decision: options.decision }).toString(),
  });
  const back = await browser.follow(decided, `${consent.url}/consent`, atRedirect);
  if (!atRedirect(back.url)) throw new Error(`not sent back to the client: ${back.url}`);
  return { consentHtml, callback: new URL(back.url) };
}
