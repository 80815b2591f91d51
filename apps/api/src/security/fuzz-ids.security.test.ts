import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { expectReconciled } from "../test/reconciled.ts";
import { idShapes, type JsonSchema, valueFor } from "./fuzz-inputs.ts";
import { recordSecurityFigure } from "./report.ts";
import { createWorld, type World } from "./world.ts";

/**
 * Every id of every /api route — path parameters, query parameters and body fields at any depth
 * whose name says it is an id — sent in each of the shapes of `idShapes` (36 dashes, 32 hex without
 * dashes, braces, a non-hex letter, a trailing space or NUL, uppercase…): never a 5xx, and a shape
 * that is not a UUID in a body or query is refused 400 naming the field (issue 37: 30 × 500 in 653
 * fuzzed requests). The random fuzz (fuzz-routes.ts) draws these shapes too; this sweeps them all.
 */

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryIds: string[];
  body: JsonSchema | undefined;
}

const ID_NAME = /(^id$|_id$|Id$|_ids$)/;
/**
 * Fields named like ids that are not ours, or whose protocol says how an unknown one is answered:
 * they must not 5xx, but are not refused 400 by this rule.
 */
const NOT_OUR_IDS = new Map([
  // Dify's API (docs/decisions on Dify compatibility): an unknown conversation, message, file or
  // workflow is answered as Dify answers it (404 or an empty page), whatever its shape.
  ["conversation_id", "Dify"],
  ["parent_message_id", "Dify"],
  ["first_id", "Dify"],
  ["last_id", "Dify"],
  ["workflow_id", "Dify"],
  ["upload_file_id", "Dify"],
  // Free-form strings the client chooses (Dify's trace id, OpenAI's tool call ids).
  ["trace_id", "client's own"],
  ["tool_call_id", "OpenAI's"],
  // Payment gateways' ids (Stripe's pi_… and pm_…, the sandbox's own).
  ["payment_intent_id", "gateway's"],
  ["stripe_payment_method_id", "Stripe's"],
  // A workflow provider's app (Dify, n8n, Flowise), whatever it calls its ids.
  ["app_id", "provider's"],
  // An organization's VAT or other tax number (decision 084), printed on its receipts.
  ["tax_id", "a tax authority's"],
]);

/** Path parameters that are ids of our rows, except on the routes whose `{id}` is someone else's. */
const OUR_PATH_IDS = new Set(["id", "cid", "rid", "eid"]);
const NOT_OUR_PATH_IDS = new Map([
  // The sandbox's dispute id (`dp_sbx_…`, as Stripe's `dp_…`).
  ["POST /api/admin/sandbox/disputes/{id}/close", "gateway's"],
]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where ids sit in a body schema: paths of property names, `[]` for an array's items. */
function idPaths(schema: JsonSchema | undefined, prefix: string[] = [], depth = 0): string[][] {
  if (!schema || depth > 4) return [];
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  const found = nested.flatMap((s) => idPaths(s, prefix, depth + 1));
  if (schema.items) found.push(...idPaths(schema.items, [...prefix, "[]"], depth + 1));
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (ID_NAME.test(name)) found.push([...prefix, name]);
    else found.push(...idPaths(property, [...prefix, name], depth + 1));
  }
  return found.filter((path, i) => found.findIndex((other) => other.join(".") === path.join(".")) === i);
}

/** `base` with the value at `path` replaced (objects and one-item arrays made on the way). */
function withValue(base: unknown, path: string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (head === "[]") {
    const items = Array.isArray(base) && base.length > 0 ? base : [{}];
    return items.map((item, i) => (i === 0 ? withValue(item, rest, value) : item));
  }
  const object = base && typeof base === "object" && !Array.isArray(base) ? base : {};
  const current = (object as Record<string, unknown>)[head];
  const leaf = rest.length === 0 && head.endsWith("_ids") ? [value] : value;
  return { ...object, [head]: rest.length === 0 ? leaf : withValue(current, rest, value) };
}

let testDb: TestDatabase;
let world: World;
let operations: Operation[];

beforeAll(async () => {
  testDb = await createTestDatabase({ memory: true });
  world = await createWorld(testDb, { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000" });
  const doc = (await world.server.app.inject({ url: "/api/openapi.json" })).json() as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: { in: string; name: string }[];
          requestBody?: { content: Record<string, { schema?: JsonSchema }> };
        }
      >
    >;
  };
  operations = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith("/api/") && path !== "/api/auth/logout/")
    .flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        pathParams: (path.match(/\{[^}]+\}/g) ?? []).map((p) => p.slice(1, -1)),
        queryIds: (operation.parameters ?? [])
          .filter((p) => p.in === "query" && ID_NAME.test(p.name))
          .map((p) => p.name),
        body: operation.requestBody?.content["application/json"]?.schema,
      })),
    )
    // Deletes last, so the rest meet the world as it was made.
    .sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await testDb?.destroy();
});

describe("ids in every shape on every route", () => {
  it(
    "never answers 5xx, and refuses a body or query id that is not a UUID with 400 naming it",
    async () => {
      const fiveHundreds: string[] = [];
      /** `field method path` of the ids not refused 400 by name, and one answer each. */
      const notNamed = new Map<string, string>();
      let cases = 0;
      /** A real value for the path parameters not under test. */
      const real = (name: string) => (name === "slug" ? world.promptApp.slug : world.promptId);
      const send = async (
        operation: Operation,
        segments: Record<string, string>,
        query: string,
        body?: unknown,
      ) => {
        const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
          encodeURIComponent(segments[name] ?? real(name)),
        );
        const url = query ? `${path}?${query}` : path;
        const answer = await world.server.app.inject({
          method: operation.method as "GET",
          url,
          headers: {
            authorization: `Bearer ${world.owner.token}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
          },
          ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
        });
        cases++;
        const seen = `${operation.method} ${url.slice(0, 160)} ${body === undefined ? "" : JSON.stringify(body).slice(0, 160)} → ${answer.statusCode} ${answer.body.slice(0, 160)}`;
        if (answer.statusCode >= 500) fiveHundreds.push(seen);
        return { status: answer.statusCode, body: answer.body, seen };
      };
      const hasBody = (operation: Operation) => ["POST", "PATCH", "PUT"].includes(operation.method);
      for (const [index, operation] of operations.entries()) {
        const [base] = fc.sample(valueFor(operation.body), { numRuns: 1, seed: index });
        const body = hasBody(operation) ? (base ?? {}) : undefined;
        for (const shape of idShapes) {
          for (const name of operation.pathParams) {
            const answer = await send(operation, { [name]: shape }, "", body);
            // Our ids in paths (`{id}`, `{cid}`, `{rid}`, `{eid}`); slugs and protocol ids are not.
            if (
              OUR_PATH_IDS.has(name) &&
              !NOT_OUR_PATH_IDS.has(`${operation.method} ${operation.path}`) &&
              !UUID.test(shape) &&
              !(answer.status === 400 && answer.body.includes(name))
            )
              notNamed.set(`${name} ${operation.method} ${operation.path}`, answer.seen);
          }
          for (const name of operation.queryIds) {
            const answer = await send(operation, {}, `${name}=${encodeURIComponent(shape)}`, body);
            if (
              !NOT_OUR_IDS.has(name) &&
              !UUID.test(shape) &&
              !(answer.status === 400 && answer.body.includes(name))
            )
              notNamed.set(`${name} ${operation.method} ${operation.path}`, answer.seen);
          }
          for (const path of idPaths(operation.body)) {
            const answer = await send(operation, {}, "", withValue(base, path, shape));
            const field = path.filter((part) => part !== "[]").at(-1) ?? "";
            if (
              !NOT_OUR_IDS.has(field) &&
              !UUID.test(shape) &&
              !(answer.status === 400 && answer.body.includes(field))
            )
              notNamed.set(`${path.join(".")} ${operation.method} ${operation.path}`, answer.seen);
          }
        }
      }
      recordSecurityFigure("fuzz_id_cases", cases);
      recordSecurityFigure("fuzz_id_5xx", fiveHundreds.length);
      console.log(
        `id shapes: ${cases} requests, ${fiveHundreds.length} × 5xx, ${notNamed.size} ids not refused by name`,
      );
      expect(fiveHundreds.slice(0, 30)).toEqual([]);
      expect([...notNamed.keys()]).toEqual([]);
      expect(cases).toBeGreaterThan(500);
    },
    20 * 60_000,
  );

  it("leaves the ledger reconciled", async () => {
    await expectReconciled(world.server.database.db);
  });
});
