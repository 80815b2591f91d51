import { describe, expect, it } from "vitest";
import { Browser } from "../test/oidc-client.ts";
import { useCaller, useTestServer } from "../test/use-test-server.ts";
import { formActionSource } from "./interaction-policy.ts";

// The sign-in and consent pages' CSP lets their forms' redirects end at the client's redirect URI
// (Chromium and Firefox apply form-action to every hop), and nowhere else (docs/decisions/051).

const server = useTestServer();
const person = useCaller(server, "Policy Person");

async function register(metadata: Record<string, unknown>) {
  const response = await fetch(`${server.baseUrl}/oidc/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token_endpoint_auth_method: "none", client_name: "Policy Agent", ...metadata }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`registration refused: ${JSON.stringify(body)}`);
  return body.client_id as string;
}

/** The sign-in page, then the consent page, of an authorization request to `redirectUri`. */
async function pagesFor(clientId: string, redirectUri: string) {
  const browser = new Browser();
  const url = new URL(`${server.baseUrl}/oidc/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "mcp",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    resource: `${server.baseUrl}/api/mcp`,
  }).toString();
  const atInteraction = (at: string) => at.includes("/oidc/interaction/");
  const signIn = await browser.follow(await browser.request(url.toString()), url.toString(), atInteraction);
  const signInPage = await browser.request(signIn.url);
  const wrongPassword = await browser.request(`${signIn.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: person.email, password: "wrong-password-1" }).toString(),
  });
  const login = await browser.request(`${signIn.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: person.email, password: "correct-horse-7" }).toString(),
  });
  const consent = await browser.follow(login, `${signIn.url}/login`, atInteraction);
  const consentPage = await browser.request(consent.url);
  return { signInPage, consentPage, wrongPassword };
}

const formAction = (response: Response) =>
  /form-action ([^;]*)/.exec(response.headers.get("content-security-policy") ?? "")?.[1];

describe("the interaction pages' form-action", () => {
  it("a loopback client: 'self' and its listener's origin, on the sign-in page, a refused sign-in and the consent page", async () => {
    const redirectUri = "http://127.0.0.1:8931/callback";
    const pages = await pagesFor(await register({ redirect_uris: [redirectUri] }), redirectUri);
    expect(await pages.consentPage.text()).toContain("Allow Policy Agent");
    for (const page of [pages.signInPage, pages.consentPage, pages.wrongPassword])
      expect(formAction(page)).toBe("'self' http://127.0.0.1:8931");
    // The rest of the policy is the strict one of every page.
    expect(pages.consentPage.headers.get("content-security-policy")).toMatch(
      /default-src 'self'; script-src 'self';.*frame-ancestors 'none'/,
    );
  });

  it("a web client: its https origin only, not its other registered URIs", async () => {
    const redirectUri = "https://agent.example/oauth/callback";
    const clientId = await register({ redirect_uris: [redirectUri, "https://other.example/cb"] });
    const pages = await pagesFor(clientId, redirectUri);
    expect(formAction(pages.consentPage)).toBe("'self' https://agent.example");
  });

  it("a native app: its private-use scheme", async () => {
    const redirectUri = "com.example.deskagent:/oauth/callback";
    const clientId = await register({ application_type: "native", redirect_uris: [redirectUri] });
    const pages = await pagesFor(clientId, redirectUri);
    expect(formAction(pages.consentPage)).toBe("'self' com.example.deskagent:");
  });

  it("a scheme that is not a reverse domain name → registration refused 400", async () => {
    const response = await fetch(`${server.baseUrl}/oidc/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        application_type: "native",
        redirect_uris: ["javascript:alert(1)"],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("invalid_redirect_uri");
  });
});

describe("formActionSource", () => {
  it("an origin for http(s), a scheme for a private-use scheme, nothing for what could widen the policy", () => {
    expect(formActionSource("http://localhost:3000/cb?x=1")).toBe("http://localhost:3000");
    expect(formActionSource("https://[::1]:8443/cb")).toBe("https://[::1]:8443");
    expect(formActionSource("com.example.app:/cb")).toBe("com.example.app:");
    for (const refused of ["javascript:alert(1)", "data:text/html,x", "not a url", 42, undefined])
      expect(formActionSource(refused)).toBeUndefined();
  });
});
