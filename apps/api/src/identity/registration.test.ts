import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oidcPayloads } from "../db/schema/index.ts";
import { answerAuthorization, MemoryOAuthProvider } from "../test/mcp-oauth.ts";
import { useCaller, useTestServer } from "../test/use-test-server.ts";
import { deleteExpiredOidcPayloads, UNUSED_CLIENT_TTL_SECONDS } from "./oidc-adapter.ts";

const server = useTestServer();
const person = useCaller(server, "Registration Tester");
const redirectUrl = "http://127.0.0.1:9/callback";
const HOUR = 60 * 60 * 1000;

/** POST /oidc/reg as the client at `address` (X-Forwarded-For from loopback, a trusted proxy). */
const register = (metadata: Record<string, unknown>, address: string) =>
  fetch(`${server.baseUrl}/oidc/reg`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": address },
    body: JSON.stringify({
      token_endpoint_auth_method: "none",
      client_name: "Probe",
      redirect_uris: [redirectUrl],
      ...metadata,
    }),
  });

const storedClient = async (clientId: string) => {
  const [row] = await server.database.db
    .select()
    .from(oidcPayloads)
    .where(and(eq(oidcPayloads.model, "Client"), eq(oidcPayloads.id, clientId)));
  return row;
};

describe("dynamic client registration", () => {
  it("refuses control characters and oversize values with 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ client_name: "Desk\u0000Agent" }, "invalid_client_metadata", "client_name"],
      [{ client_name: "Desk\u0007Agent" }, "invalid_client_metadata", "client_name"],
      [{ client_name: "Desk\u202eAgent" }, "invalid_client_metadata", "client_name"],
      [{ client_name: "x".repeat(201) }, "invalid_client_metadata", "client_name"],
      [{ client_uri: "https://agent.example/\u0000" }, "invalid_client_metadata", "client_uri"],
      [{ logo_uri: `https://agent.example/${"a".repeat(2100)}` }, "invalid_client_metadata", "logo_uri"],
      [{ policy_uri: "https://agent.example/\n" }, "invalid_client_metadata", "policy_uri"],
      [{ contacts: ["a@agent.example\u0000"] }, "invalid_client_metadata", "contacts[0]"],
      [{ redirect_uris: ["http://127.0.0.1:9/c\u0000b"] }, "invalid_redirect_uri", "redirect_uris[0]"],
      [
        { redirect_uris: Array.from({ length: 21 }, (_, i) => `http://127.0.0.1:9/cb${i}`) },
        "invalid_redirect_uri",
        "redirect_uris",
      ],
    ];
    for (const [metadata, error, field] of cases) {
      const response = await register(metadata, "198.51.100.1");
      expect(response.status, JSON.stringify(metadata).slice(0, 80)).toBe(400);
      const body = await response.json();
      expect(body.error).toBe(error);
      expect(body.error_description.startsWith(`${field} `), body.error_description).toBe(true);
    }
    // The refused ones count towards the address's limit: 10 of 10 are spent.
    expect((await register({}, "198.51.100.1")).status).toBe(429);
    // A clean registration from another address is stored.
    const good = await register(
      { client_name: "Desk Agent ✓", logo_uri: "https://agent.example/l.png" },
      "198.51.100.2",
    );
    expect(good.status).toBe(201);
    expect((await good.json()).client_name).toBe("Desk Agent ✓");
  });

  it("lets one address register 10 clients per 10 minutes, then answers 429 with Retry-After", async () => {
    const address = "203.0.113.7";
    for (let i = 0; i < 10; i++)
      expect((await register({ client_name: `Agent ${i}` }, address)).status).toBe(201);
    const refused = await register({ client_name: "Agent 11" }, address);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(9 * 60);
    expect(retryAfter).toBeLessThanOrEqual(10 * 60);
    expect(await refused.json()).toMatchObject({ error: "rate_limited" });
    // Another address is not affected.
    expect((await register({ client_name: "Agent elsewhere" }, "203.0.113.8")).status).toBe(201);
  });

  it("deletes a registration never used a day later, and keeps one that obtained a token", async () => {
    const unused = (await (await register({ client_name: "Never used" }, "192.0.2.10")).json()).client_id;
    expect(unused).toEqual(expect.any(String));

    // An MCP client registers, the person allows it, it redeems the code for tokens.
    const provider = new MemoryOAuthProvider(redirectUrl, "Used Agent");
    const serverUrl = new URL(`${server.baseUrl}/api/mcp`);
    await auth(provider, { serverUrl });
    const { callback } = await answerAuthorization(provider.authorizationUrl as URL, {
      email: person.email,
      password: "correct-horse-7",
      redirectUrl,
      decision: "allow",
    });
    await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get("code") as string });
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    const used = provider.information?.client_id as string;

    const registeredUntil = (await storedClient(unused))?.expiresAt?.getTime() ?? 0;
    expect(Math.abs(registeredUntil - (Date.now() + UNUSED_CLIENT_TTL_SECONDS * 1000))).toBeLessThan(HOUR);
    expect((await storedClient(used))?.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * HOUR);

    // The sweep, as it runs 25 hours from now.
    expect(
      await deleteExpiredOidcPayloads(server.database.db, new Date(Date.now() + 25 * HOUR)),
    ).toBeGreaterThan(0);
    expect(await storedClient(unused)).toBeUndefined();
    expect(await storedClient(used)).toBeDefined();

    // The unused client can no longer start a sign-in; the used one still can.
    const authorizeWith = (clientId: string) =>
      fetch(
        `${server.baseUrl}/oidc/auth?${new URLSearchParams({
          client_id: clientId,
          response_type: "code",
          redirect_uri: redirectUrl,
          scope: "mcp",
          code_challenge: "a".repeat(43),
          code_challenge_method: "S256",
          resource: serverUrl.toString(),
        })}`,
        { redirect: "manual" },
      );
    const gone = await authorizeWith(unused);
    expect(gone.status).toBe(400);
    expect(await gone.text()).toContain("client is invalid");
    expect((await authorizeWith(used)).status).toBe(303);
  });
});
