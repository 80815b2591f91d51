import { beforeAll, describe, expect, it } from "vitest";
import { forgeToken, unsignedToken } from "../test/tokens.ts";
import { recordSecurityFigure } from "./report.ts";
import { type RouteRequest, routeTable } from "./route-table.ts";
import { useWorld } from "./world.ts";

/**
 * DESIGN.md §5 for every route of the OpenAPI document: each route × each kind of caller gets
 * exactly the status its class promises. A route missing from route-table.ts fails the test.
 */
const roles = [
  "signedOut",
  "owner",
  "other",
  "ownerKey",
  "consumerKey",
  "revokedKey",
  "expired",
  "otherAudience",
  "algNone",
] as const;
type Role = (typeof roles)[number];

const world = useWorld();
let credentials: Record<Role, string | undefined>;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  const { db } = world.server.database;
  const { iss, sub } = JSON.parse(
    Buffer.from(world.owner.token.split(".")[1] ?? "", "base64url").toString(),
  ) as { iss: string; sub: string };
  const aud = world.server.config.oidc.audience;
  const now = Math.floor(Date.now() / 1000);
  credentials = {
    signedOut: undefined,
    owner: world.owner.token,
    other: world.other.token,
    ownerKey: world.ownerKey.key,
    consumerKey: world.consumerKey,
    revokedKey: world.revokedKey,
    // Past the verifier's 300 s clock tolerance.
    expired: await forgeToken(db, { iss, aud, sub, exp: now - 301 }),
    otherAudience: await forgeToken(db, { iss, aud: "https://other.example/api", sub, exp: now + 600 }),
    algNone: unsignedToken({ iss, aud, sub, exp: now + 600, iat: now }),
  };
  const doc = (await world.server.app.inject({ url: "/api/openapi.json?internal=true" })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.keys(byMethod).map((method) => ({ method: method.toUpperCase(), path })),
  );
});

/** What each class of route answers each caller; `ok` is the route's own success status. */
function expectedStatus(route: RouteRequest, role: Role, ok: number): number | "same-as-signed-out" {
  const override = route.expect?.[role];
  if (override !== undefined) return override;
  const validToken = role === "owner" || role === "other";
  const validKey = role === "ownerKey" || role === "consumerKey";
  switch (route.class) {
    case "public":
      return ok;
    case "issuer":
      return "same-as-signed-out";
    case "token":
    case "self":
      return validToken ? ok : 401;
    case "owned":
      return role === "owner" ? ok : role === "other" ? 404 : 401;
    case "gateway":
      if (role === "owner" || role === "ownerKey") return ok;
      return role === "other" || role === "consumerKey" ? 404 : 401;
    case "gateway-any":
      return validToken || validKey ? ok : 401;
    case "admin":
      return role === "owner" ? ok : role === "other" ? 403 : 401;
  }
}

describe("authorization matrix", () => {
  it("classifies every route of the OpenAPI document, and only those", () => {
    const table = routeTable(world);
    const documented = operations.map(({ method, path }) => `${method} ${path}`);
    const unclassified = documented.filter((key) => !(key in table));
    expect(unclassified, "add these routes to security/route-table.ts").toEqual([]);
    expect(Object.keys(table).filter((key) => !documented.includes(key))).toEqual([]);
    expect(documented.length).toBeGreaterThanOrEqual(80);
  });

  it("answers every route × caller with its class's status, never an unauthorized 2xx", async () => {
    const table = routeTable(world);
    const mismatches: string[] = [];
    let unauthorized2xx = 0;
    let checked = 0;
    // Owners go last so their deletes and changes do not alter what the others see.
    const order: Role[] = [
      ...roles.filter((role) => role !== "owner" && role !== "ownerKey"),
      "ownerKey",
      "owner",
    ];
    // Every /api route is served again under /api/v1 (hidden from the document): same rules.
    // Deletes are not repeated there, their one spare resource being gone by then, nor is the
    // sign-out, whose callers' tokens are refused from then on.
    const runsAt = (route: RouteRequest) => (route.signsOut ? 2 : route.last ? 1 : 0);
    const entries = [
      ...Object.entries(table),
      ...Object.entries(table)
        .filter(([, route]) => /^\/api\/(?!v1\/)/.test(route.url) && runsAt(route) === 0)
        .map(([key, route]): [string, RouteRequest] => [
          `${key} (v1)`,
          { ...route, url: route.url.replace(/^\/api\//, "/api/v1/") },
        ]),
    ].sort(([, a], [, b]) => runsAt(a) - runsAt(b));
    for (const [key, route] of entries) {
      const [method = "GET"] = key.split(" ");
      let signedOutStatus: number | undefined;
      for (const role of order) {
        const auth = credentials[role];
        const answer = await world.server.app.inject({
          method: method as "GET",
          url: route.url,
          headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...route.headers },
          ...(route.payload !== undefined ? { payload: route.payload } : {}),
        });
        checked++;
        if (role === "signedOut") signedOutStatus = answer.statusCode;
        const expected = expectedStatus(route, role, route.ok ?? 200);
        const wanted = expected === "same-as-signed-out" ? signedOutStatus : expected;
        const is2xx = answer.statusCode >= 200 && answer.statusCode < 300;
        if (is2xx && !(wanted !== undefined && wanted >= 200 && wanted < 300)) unauthorized2xx++;
        if (answer.statusCode !== wanted || answer.statusCode >= 500)
          mismatches.push(
            `${key} as ${role}: ${answer.statusCode}, expected ${wanted} ${answer.body.slice(0, 160)}`,
          );
      }
    }
    recordSecurityFigure("routes_roles_checked", checked);
    recordSecurityFigure("unauthorized_2xx", unauthorized2xx);
    expect(mismatches).toEqual([]);
    expect(unauthorized2xx).toBe(0);
    expect(checked).toBe(entries.length * roles.length);
    expect(entries.length).toBeGreaterThan(Object.keys(table).length + 50);
  });
});
