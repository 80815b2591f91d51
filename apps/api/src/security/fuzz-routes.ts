import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES } from "../app.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { expectReconciled } from "../test/reconciled.ts";
import {
  hostileBody,
  type JsonSchema,
  pathSegment,
  type QueryParameter,
  queryString,
} from "./fuzz-inputs.ts";
import { recordSecurityFigure } from "./report.ts";
import { createWorld, type World } from "./world.ts";

/**
 * The /api routes of the OpenAPI document with the given tags, fed generated bodies, query
 * strings and path parameters from their own schemas plus hostile ones, as their owner: invalid
 * input is a 4xx, valid input may be a 2xx, nothing is ever a 5xx, and the ledger still
 * reconciles afterwards. Two test files share the routes so they can run side by side.
 */
const CASES_PER_ROUTE = Number(process.env.FUZZ_CASES_PER_ROUTE ?? 1_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
// Tens of thousands of requests: minutes on a busy machine, well past the project's 2-minute default.
const FUZZ_TIMEOUT_MS = 20 * 60_000;

interface Operation {
  method: string;
  path: string;
  query: QueryParameter[];
  body: JsonSchema | undefined;
  hasBody: boolean;
}

/** The tags each fuzz test file takes; every documented /api route must fall in one. */
export const fuzzShards = {
  management: [
    "system",
    "auth",
    "creators",
    "keys",
    "analytics",
    "applications",
    "prompts",
    "workflows",
    "organizations",
  ],
  // Split from management (issue 42): with reviews added, one shard's 1,000 cases per route ran
  // past the 20-minute limit on a loaded machine.
  catalogue: [
    "packaging",
    "explore",
    "reviews",
    "models",
    "experiments",
    "online-evals",
    "rollouts",
    "webhooks",
  ],
  billingAndGateway: [
    "billing",
    "promotions",
    "gateway",
    "openai",
    "mcp",
    "embed",
    "admin",
    "payouts",
    "agents",
    "evals-api",
  ],
};

export function fuzzRoutes(tags: string[]): void {
  let testDb: TestDatabase;
  let world: World;
  let operations: Operation[];
  let realIds: string[];

  beforeAll(async () => {
    // On a memory-backed file system: the same database engine, without a disk under tens of
    // thousands of requests.
    testDb = await createTestDatabase({ memory: true });
    world = await createWorld(testDb, {
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000",
      // The world's access tokens must outlive the run: on a loaded machine it took 603 s, past the
      // default 5 minutes, and the follow-up checks (profile, 413 per route) were answered 401.
      OIDC_ACCESS_TOKEN_TTL_SECONDS: String(Math.ceil(FUZZ_TIMEOUT_MS / 1000) + 600),
    });
    const doc = (await world.server.app.inject({ url: "/api/openapi.json" })).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            tags?: string[];
            parameters?: { in: string; name: string; schema?: JsonSchema }[];
            requestBody?: { content: Record<string, { schema?: JsonSchema }> };
          }
        >
      >;
    };
    const untagged = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/api/"))
      .flatMap(([path, byMethod]) =>
        Object.entries(byMethod)
          .filter(
            ([, operation]) => !operation.tags?.some((tag) => Object.values(fuzzShards).flat().includes(tag)),
          )
          .map(([method]) => `${method} ${path}`),
      );
    if (untagged.length > 0) throw new Error(`add the tags of ${untagged.join(", ")} to fuzzShards`);
    operations = Object.entries(doc.paths)
      // Sign-out would end the owner's sessions and turn every later case into a 401; its body
      // is the same empty schema as login's, which is fuzzed.
      .filter(([path]) => path.startsWith("/api/") && path !== "/api/auth/logout/")
      .flatMap(([path, byMethod]) =>
        Object.entries(byMethod)
          .filter(([, operation]) => operation.tags?.some((tag) => tags.includes(tag)))
          .map(([method, operation]) => ({
            method: method.toUpperCase(),
            path,
            query: (operation.parameters ?? []).filter((p) => p.in === "query"),
            body: operation.requestBody?.content["application/json"]?.schema,
            hasBody:
              operation.requestBody !== undefined || ["POST", "PATCH", "PUT"].includes(method.toUpperCase()),
          })),
      )
      // Deletes last, so the rest meet the world as it was made.
      .sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
    realIds = [
      world.promptApp.slug,
      world.workflowApp.slug,
      world.otherApp.slug,
      world.promptId,
      world.workflowId,
      world.packageId,
      world.subscriptionId,
      world.cardId,
      world.ownerKey.id,
      world.promotionCode.id,
    ];
  });
  afterAll(async () => {
    await world?.stop();
    await testDb?.destroy();
  });

  /**
   * Content types, and whether a route must refuse a body sent with it: JSON is parsed, text and
   * forms are refused, multipart is only read by the upload route (elsewhere the body is ignored).
   */
  const contentTypes = fc.oneof(
    { arbitrary: fc.constant({ value: "application/json", json: true, refused: false }), weight: 12 },
    fc.constantFrom(
      { value: "application/json; charset=utf-16", json: true, refused: false },
      { value: "text/plain", json: false, refused: true },
      { value: "application/x-www-form-urlencoded", json: false, refused: true },
      { value: "application/json\u0000", json: false, refused: true },
      { value: "multipart/form-data; boundary=x", json: false, refused: false },
    ),
  );

  function caseFor(operation: Operation) {
    const segments = (operation.path.match(/\{[^}]+\}/g) ?? []).map(() => pathSegment(realIds));
    return fc.record({
      segments: fc.tuple(...segments),
      query: queryString(operation.query),
      body: operation.hasBody ? hostileBody(operation.body) : fc.constant(undefined),
      contentType: contentTypes,
    });
  }

  describe(`fuzzing the ${tags.join(", ")} routes of the OpenAPI document`, () => {
    // First: the fuzzing below spends the owner's and this address's per-minute limits (MCP's
    // among them), which refuse with 429 before a body is read; when the fuzzing ended would then
    // decide what this test sees (a 429 on the MCP routes in one CI run). The body limit is judged alone.
    it("answers 413 to a body over the limit on every route that takes one", async () => {
      const tooLarge = JSON.stringify({ name: "x".repeat(BODY_LIMIT_BYTES) });
      const withBodies = operations.filter((operation) => operation.body !== undefined);
      expect(withBodies.length).toBeGreaterThanOrEqual(8);
      const statuses: Record<string, number> = {};
      for (const operation of withBodies) {
        const answer = await world.server.app.inject({
          method: operation.method as "POST",
          url: operation.path.replace(/\{[^}]+\}/g, world.promptApp.slug),
          headers: { authorization: `Bearer ${world.owner.token}`, "content-type": "application/json" },
          payload: tooLarge,
        });
        statuses[`${operation.method} ${operation.path}`] = answer.statusCode;
      }
      // Refused before any body is read: the widget's route checks its embed token (a bearer token
      // is none); the agents' MCP endpoints exist only while agent payments are on, and this world
      // has none (decision 074).
      const refusedFirst = new Map([
        ["POST /api/embed/{slug}/messages", 401],
        ["POST /api/agents/app/{slug}/mcp", 404],
        ["POST /api/agents/mcp", 404],
      ]);
      expect(
        Object.entries(statuses).filter(
          ([route, status]) => status !== 413 && refusedFirst.get(route) !== status,
        ),
      ).toEqual([]);
    });

    it(
      `answers ${CASES_PER_ROUTE} generated requests per route with 2xx or 4xx, never a 5xx`,
      async () => {
        const failures: string[] = [];
        let cases = 0;
        let fiveHundreds = 0;
        for (const [index, operation] of operations.entries()) {
          const samples = fc.sample(caseFor(operation), { numRuns: CASES_PER_ROUTE, seed: SEED + index });
          for (const sample of samples) {
            let segment = 0;
            const path = operation.path.replace(/\{[^}]+\}/g, () => sample.segments[segment++] as string);
            const url = sample.query ? `${path}?${sample.query}` : path;
            const answer = await world.server.app.inject({
              method: operation.method as "GET",
              url,
              headers: {
                authorization: `Bearer ${world.owner.token}`,
                ...(sample.body !== undefined ? { "content-type": sample.contentType.value } : {}),
              },
              ...(sample.body !== undefined ? { payload: sample.body.text } : {}),
            });
            cases++;
            // Bodies no route may accept: broken JSON, prototype keys, text and forms.
            const type = sample.contentType;
            const invalid = sample.body !== undefined && ((sample.body.invalid && type.json) || type.refused);
            const ok =
              (!invalid && answer.statusCode >= 200 && answer.statusCode < 300) ||
              (answer.statusCode >= 400 && answer.statusCode < 500);
            if (answer.statusCode >= 500) fiveHundreds++;
            if (!ok && failures.length < 20)
              failures.push(
                `${operation.method} ${url.slice(0, 200)} body ${String(sample.body?.text).slice(0, 200)} → ${answer.statusCode} ${answer.body.slice(0, 200)}`,
              );
          }
        }
        recordSecurityFigure("fuzz_cases", cases);
        recordSecurityFigure("fuzz_5xx", fiveHundreds);
        expect(failures).toEqual([]);
        expect(cases).toBe(operations.length * CASES_PER_ROUTE);
        expect(operations.length).toBeGreaterThanOrEqual(10);
      },
      FUZZ_TIMEOUT_MS,
    );

    it("is still up and answering, and the ledger reconciles", async () => {
      expect((await world.server.app.inject({ url: "/healthz" })).statusCode).toBe(200);
      const profile = await world.other.api("GET", "/api/auth/profile/");
      expect(profile.status).toBe(200);
      await expectReconciled(world.server.database.db);
    });
  });
}
