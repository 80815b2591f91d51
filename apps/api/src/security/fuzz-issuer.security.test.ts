import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { signUp, startSignIn } from "../test/oidc-client.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { hostileString, pathSegment } from "./fuzz-inputs.ts";
import { recordSecurityFigure } from "./report.ts";

/**
 * The embedded issuer's own pages (sign-in, sign-up, their assets), fed hostile forms, path
 * segments and query strings through a real browser session: a 4xx page or a redirect, never
 * a 5xx. The endpoints oidc-provider serves itself (/oidc, /oidc/*) are its own library's.
 */
const CASES_PER_ROUTE = Number(process.env.FUZZ_CASES_PER_ROUTE ?? 1_000);
const FUZZ_TIMEOUT_MS = 20 * 60_000;

let testDb: TestDatabase;
let server: TestServer;
let journey: Awaited<ReturnType<typeof startSignIn>>;
let uid: string;

beforeAll(async () => {
  testDb = await createTestDatabase({ memory: true });
  server = await startTestServer(testDb);
  // Someone to sign in as: the fuzz's valid-looking forms meet a real account.
  await signUp(server.baseUrl, { email: "ada@example.com", password: "correct-horse-7" });
  journey = await startSignIn(server.baseUrl);
  uid = new URL(journey.page.url).pathname.split("/").pop() ?? "";
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

const formValue = fc.oneof(
  hostileString,
  fc.constantFrom("", "ada@example.com", "correct-horse-7", "Ada"),
  fc.emailAddress(),
);
const form = fc.record(
  { email: formValue, password: formValue, display_name: formValue, extra: hostileString },
  { requiredKeys: [] },
);
const rawBody = fc.oneof(
  form.map((fields) => ({
    type: "application/x-www-form-urlencoded",
    text: new URLSearchParams(
      Object.entries(fields).map(([key, value]) => [key, Buffer.from(value).toString()]),
    ).toString(),
  })),
  fc.constantFrom(
    { type: "application/x-www-form-urlencoded", text: "email=%FF%FE&password=%00" },
    { type: "application/x-www-form-urlencoded", text: "email[]=a&email[]=b&__proto__[x]=1" },
    { type: "application/x-www-form-urlencoded", text: `email=${"a".repeat(20_000)}` },
    { type: "application/json", text: '{"email":{"$ne":null},"password":["x"]}' },
    { type: "text/plain", text: "email=a" },
    { type: "multipart/form-data; boundary=x", text: "--x--" },
  ),
);

describe("fuzzing the issuer's sign-in and sign-up pages", () => {
  it(
    `answers ${CASES_PER_ROUTE} hostile requests per page without a 5xx`,
    async () => {
      const pages: { name: string; method: string; path: (segment: string) => string }[] = [
        { name: "interaction page", method: "GET", path: (s) => `/oidc/interaction/${s}` },
        { name: "sign-in form", method: "POST", path: (s) => `/oidc/interaction/${s}/login` },
        { name: "sign-up form", method: "POST", path: (s) => `/oidc/interaction/${s}/register` },
        { name: "asset", method: "GET", path: (s) => `/oidc/assets/${s}` },
        {
          name: "verification link",
          method: "GET",
          path: (s) => `/oidc/verify-email?token=${encodeURIComponent(s)}`,
        },
        { name: "verification form", method: "POST", path: () => "/oidc/verify-email" },
        { name: "forgot-password form", method: "POST", path: () => "/oidc/password/forgot" },
        { name: "reset-password form", method: "POST", path: () => "/oidc/password/reset" },
      ];
      const failures: string[] = [];
      let cases = 0;
      let fiveHundreds = 0;
      for (const [index, page] of pages.entries()) {
        const samples = fc.sample(
          fc.record({ segment: pathSegment([uid, "sign-in.css"]), query: hostileString, body: rawBody }),
          { numRuns: CASES_PER_ROUTE, seed: 4_242 + index },
        );
        for (const sample of samples) {
          const url = `${server.baseUrl}${page.path(sample.segment)}?q=${encodeURIComponent(Buffer.from(sample.query).toString())}`;
          const response = await journey.browser.request(url, {
            method: page.method,
            ...(page.method === "POST"
              ? { headers: { "content-type": sample.body.type }, body: sample.body.text }
              : {}),
          });
          await response.arrayBuffer();
          cases++;
          if (response.status >= 500) {
            fiveHundreds++;
            if (failures.length < 20)
              failures.push(`${page.method} ${url.slice(0, 200)} → ${response.status}`);
          }
        }
      }
      recordSecurityFigure("fuzz_cases", cases);
      recordSecurityFigure("fuzz_5xx", fiveHundreds);
      expect(failures).toEqual([]);
      expect(cases).toBe(pages.length * CASES_PER_ROUTE);
    },
    FUZZ_TIMEOUT_MS,
  );

  it("still serves a fresh sign-in page afterwards", async () => {
    const fresh = await startSignIn(server.baseUrl);
    expect(fresh.page.status).toBe(200);
    expect(fresh.page.html).toContain("password");
  });
});
