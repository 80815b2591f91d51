import { createHash, randomBytes } from "node:crypto";
import { EMBEDDED_SPA_CLIENT_ID } from "../config.ts";

/** A tiny cookie jar + redirect walker: drives the embedded issuer exactly like a browser would. */
export class Browser {
  private readonly cookies = new Map<string, string>();

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const index = pair?.indexOf("=") ?? -1;
      if (pair && index > 0) {
        const name = pair.slice(0, index);
        const value = pair.slice(index + 1);
        if (value === "" || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
    }
    return response;
  }

  /** Follows redirects until one leaves `origin` or a page is answered. */
  async follow(
    response: Response,
    from: string,
    stopAt: (url: string) => boolean,
  ): Promise<{ response: Response; url: string }> {
    let current = response;
    let url = from;
    for (let hops = 0; hops < 10 && current.status >= 300 && current.status < 400; hops++) {
      const location = current.headers.get("location");
      if (!location) break;
      url = new URL(location, url).toString();
      if (stopAt(url)) return { response: current, url };
      current = await this.request(url);
    }
    return { response: current, url };
  }
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token: string;
  expires_in: number;
  token_type: string;
}

export interface OidcJourney {
  browser: Browser;
  /** The interaction page's URL and HTML. */
  page: { url: string; html: string; status: number };
  submit(
    path: "login" | "register",
    form: Record<string, string>,
  ): Promise<{ status: number; html: string; tokens?: Tokens }>;
}

/** Starts the authorization-code + PKCE flow of the SPA client and stops on our sign-in page. */
export async function startSignIn(baseUrl: string, options: { signUp?: boolean } = {}): Promise<OidcJourney> {
  const browser = new Browser();
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const state = randomBytes(8).toString("hex");
  const redirectUri = `${baseUrl}/auth/callback`;
  const authorize = new URL(`${baseUrl}/oidc/auth`);
  authorize.search = new URLSearchParams({
    client_id: EMBEDDED_SPA_CLIENT_ID,
    response_type: "code",
    redirect_uri: redirectUri,
    scope: "openid profile email offline_access",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    nonce: randomBytes(8).toString("hex"),
    ...(options.signUp ? { screen_hint: "signup" } : {}),
  }).toString();

  const first = await browser.request(authorize.toString());
  const { url: interactionUrl } = await browser.follow(first, authorize.toString(), (u) =>
    u.includes("/oidc/interaction/"),
  );
  if (!interactionUrl.includes("/oidc/interaction/"))
    throw new Error(`expected a redirect to the interaction page, got ${first.status}`);
  const pageResponse = await browser.request(interactionUrl);
  const page = { url: interactionUrl, html: await pageResponse.text(), status: pageResponse.status };

  return {
    browser,
    page,
    async submit(path, form) {
      const response = await browser.request(`${interactionUrl}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      if (response.status !== 303) return { status: response.status, html: await response.text() };
      const { url } = await browser.follow(response, `${interactionUrl}/${path}`, (u) =>
        u.startsWith(redirectUri),
      );
      const callback = new URL(url);
      if (callback.searchParams.get("state") !== state) throw new Error(`state mismatch at ${url}`);
      const code = callback.searchParams.get("code");
      if (!code) throw new Error(`no code in callback ${url}`);
      const tokenResponse = await fetch(`${baseUrl}/oidc/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          client_id: EMBEDDED_SPA_CLIENT_ID,
          code_verifier: verifier,
        }).toString(),
      });
      if (!tokenResponse.ok)
        throw new Error(`token exchange failed: ${tokenResponse.status} ${await tokenResponse.text()}`);
      return { status: 303, html: "", tokens: (await tokenResponse.json()) as Tokens };
    },
  };
}

let counter = 0;
export function uniqueEmail(prefix = "user"): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}@example.com`;
}

/** Signs a new person up through the real pages and returns their tokens. */
export async function signUp(
  baseUrl: string,
  person: { email?: string; password?: string; displayName?: string } = {},
): Promise<Tokens & { email: string; password: string }> {
  const email = person.email ?? uniqueEmail();
  const password = person.password ?? "correct-horse-7";
  const journey = await startSignIn(baseUrl, { signUp: true });
  const result = await journey.submit("register", {
    email,
    password,
    display_name: person.displayName ?? "Ada Lovelace",
  });
  if (!result.tokens) throw new Error(`sign-up failed with ${result.status}: ${result.html.slice(0, 400)}`);
  return { ...result.tokens, email, password };
}

export async function signIn(baseUrl: string, email: string, password: string): Promise<Tokens> {
  const journey = await startSignIn(baseUrl);
  const result = await journey.submit("login", { email, password });
  if (!result.tokens) throw new Error(`sign-in failed with ${result.status}: ${result.html.slice(0, 400)}`);
  return result.tokens;
}
