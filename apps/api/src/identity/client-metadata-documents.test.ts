import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerAuthorization, MemoryOAuthProvider } from "../test/mcp-oauth.ts";
import { listenHttpsOnLoopback } from "../test/tls-loopback.ts";
import { useCaller, useTestServer, withTestServer } from "../test/use-test-server.ts";
import { MAX_DOCUMENT_BYTES } from "./client-metadata-documents.ts";

// Client ID Metadata Documents (MCP authorization 2025-11-25): an https URL as client_id, the
// issuer fetching the document there. The documents are served over real TLS on loopback, which
// this server may reach because ALLOW_PRIVATE_UPSTREAMS is on (as in tests and development).

const redirectUrl = "http://127.0.0.1:9/callback";
const documents = new Map<string, string>();
const fetched: string[] = [];
let documentServer: Awaited<ReturnType<typeof listenHttpsOnLoopback>>;
const documentUrl = (name: string) => `${documentServer.origin}/clients/${name}.json`;

beforeAll(async () => {
  documentServer = await listenHttpsOnLoopback((request, response) => {
    fetched.push(request.url ?? "");
    const body = documents.get(request.url ?? "");
    if (body === undefined) return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" }).end(body);
  });
  const publish = (name: string, document: Record<string, unknown>) =>
    documents.set(`/clients/${name}.json`, JSON.stringify(document));
  const metadata = (name: string) => ({
    client_id: documentUrl(name),
    client_name: "Web Agent",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  publish("agent", metadata("agent"));
  publish("mismatch", { ...metadata("mismatch"), client_id: "https://elsewhere.example/agent.json" });
  publish("oversize", { ...metadata("oversize"), logo_note: "x".repeat(MAX_DOCUMENT_BYTES) });
  publish("secret", { ...metadata("secret"), token_endpoint_auth_method: "client_secret_post" });
});
afterAll(() => documentServer?.close());

const server = useTestServer({ env: { ALLOW_PRIVATE_UPSTREAMS: "true" } });
const person = useCaller(server, "CIMD Person");

/** A browser opening the authorization URL for `clientId`: the issuer's answer. */
async function authorize(baseUrl: string, clientId: string) {
  const url = new URL(`${baseUrl}/oidc/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUrl,
    response_type: "code",
    scope: "mcp",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    resource: `${baseUrl}/api/mcp`,
  }).toString();
  const response = await fetch(url, { redirect: "manual" });
  return { status: response.status, location: response.headers.get("location"), html: await response.text() };
}

class MetadataUrlProvider extends MemoryOAuthProvider {
  clientMetadataUrl = documentUrl("agent");
}

describe("client ID metadata documents", () => {
  it("are advertised in the authorization server metadata", async () => {
    const metadata = await (
      await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server/oidc`)
    ).json();
    expect(metadata.client_id_metadata_document_supported).toBe(true);
  });

  it("the SDK's client signs in with its document's URL as client_id, no registration → works", async () => {
    const provider = new MetadataUrlProvider(redirectUrl);
    const serverUrl = new URL(`${server.baseUrl}/api/mcp`);
    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(provider.information?.client_id).toBe(documentUrl("agent"));
    expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(documentUrl("agent"));

    const { consentHtml, callback } = await answerAuthorization(provider.authorizationUrl as URL, {
      email: person.email,
      password: "correct-horse-7",
      redirectUrl,
      decision: "allow",
    });
    // The name is the document's own; the host that serves it is shown beside it.
    expect(consentHtml).toContain(`Web Agent (127.0.0.1:${new URL(documentServer.origin).port})`);
    const code = callback.searchParams.get("code") as string;
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe("AUTHORIZED");

    const client = new Client({ name: "web-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("search_apps");
    await client.close();
    // Fetched once: the issuer kept the document (its max-age) for the token exchange and after.
    expect(fetched.filter((url) => url === "/clients/agent.json")).toHaveLength(1);
  });

  it("a document whose client_id is not its URL → refused 400", async () => {
    const answer = await authorize(server.baseUrl, documentUrl("mismatch"));
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.html).toContain("client_id does not match");
  });

  it("a document over 5 KiB → refused 400, nothing kept", async () => {
    const answer = await authorize(server.baseUrl, documentUrl("oversize"));
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.html).toContain("fetch failed");
    expect(answer.html).toMatch(/larger than 5 KiB|response too large/);
  });

  it("a document asking for a shared secret → refused 400", async () => {
    const answer = await authorize(server.baseUrl, documentUrl("secret"));
    expect(answer.status).toBe(400);
    expect(answer.html).toContain("shared-secret");
  });

  it("an http URL as client_id → refused 400, never fetched", async () => {
    const before = fetched.length;
    const answer = await authorize(
      server.baseUrl,
      `http://127.0.0.1:${new URL(documentServer.origin).port}/clients/agent.json`,
    );
    expect(answer.status).toBe(400);
    expect(fetched.length).toBe(before);
  });

  it("new documents past the address's registration limit → refused 400, known ones still served", async () => {
    await withTestServer(
      { env: { ALLOW_PRIVATE_UPSTREAMS: "true", OIDC_REGISTRATIONS_PER_IP: "1" } },
      async (limited) => {
        const before = fetched.length;
        expect((await authorize(limited.baseUrl, documentUrl("agent"))).status).toBe(303);
        const refused = await authorize(limited.baseUrl, documentUrl("secret"));
        expect(refused.status).toBe(400);
        expect(refused.html).toContain("Too many new clients were introduced from your address");
        expect(fetched.length).toBe(before + 1);
        // The document already fetched is kept: its client is not held up.
        expect((await authorize(limited.baseUrl, documentUrl("agent"))).status).toBe(303);
      },
    );
  });

  it("a document on a private or loopback address, outside tests → refused 400, never fetched", async () => {
    const before = fetched.length;
    await withTestServer({}, async (guarded) => {
      const answer = await authorize(guarded.baseUrl, documentUrl("agent"));
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.html).toContain("private or reserved address");
    });
    expect(fetched.length).toBe(before);
  });
});
