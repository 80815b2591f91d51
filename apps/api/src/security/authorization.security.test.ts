import { beforeAll, describe, expect, it } from "vitest";
import { routeAccess } from "../modules/organizations/access.ts";
import { roleMay } from "../modules/organizations/membership.ts";
import { forgeToken, unsignedToken } from "../test/tokens.ts";
import { addOrganization, type OrganizationWorld, organizationRoles } from "./organization-world.ts";
import { recordSecurityFigure } from "./report.ts";
import { type RouteRequest, routeTable } from "./route-table.ts";
import { useWorld } from "./world.ts";

/**
 * DESIGN.md §5 for every route of the OpenAPI document: each route × each kind of caller gets
 * exactly the status its class promises. A route missing from route-table.ts fails the test.
 * Organizations' callers (decision 084) act with `Promptmint-Organization`: see memberExpected.
 */
const personRoles = [
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
const memberRoles = organizationRoles.map((role) => `org-${role}` as const);
const organizationCallers = [...memberRoles, "org-removed", "org-outsider", "org-key"] as const;
const roles = [...personRoles, ...organizationCallers];
type Role = (typeof roles)[number];
type OrganizationCaller = (typeof organizationCallers)[number];

const world = useWorld();
let organization: OrganizationWorld;
const credentials = {} as Record<Role, { auth?: string; organization?: string }>;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  const { db } = world.server.database;
  const { iss, sub } = JSON.parse(
    Buffer.from(world.owner.token.split(".")[1] ?? "", "base64url").toString(),
  ) as { iss: string; sub: string };
  const aud = world.server.config.oidc.audience;
  const now = Math.floor(Date.now() / 1000);
  Object.assign(credentials, {
    signedOut: {},
    owner: { auth: world.owner.token },
    other: { auth: world.other.token },
    ownerKey: { auth: world.ownerKey.key },
    consumerKey: { auth: world.consumerKey },
    revokedKey: { auth: world.revokedKey },
    // Past the verifier's 300 s clock tolerance.
    expired: { auth: await forgeToken(db, { iss, aud, sub, exp: now - 301 }) },
    otherAudience: {
      auth: await forgeToken(db, { iss, aud: "https://other.example/api", sub, exp: now + 600 }),
    },
    algNone: { auth: unsignedToken({ iss, aud, sub, exp: now + 600, iat: now }) },
  });
  const doc = (await world.server.app.inject({ url: "/api/openapi.json?internal=true" })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.keys(byMethod).map((method) => ({ method: method.toUpperCase(), path })),
  );
});

/** An answer the matrix wants: a status, and for the organization's refusals, which one. */
interface Expected {
  status: number | "same-as-signed-out";
  code?: string;
  message?: string;
}

/** What each class of route answers a person's credential; `ok` is the route's own success status. */
function classStatus(route: RouteRequest, role: Role, ok: number): number | "same-as-signed-out" {
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

/**
 * An organization's caller (decision 084), for the route `METHOD /path` as documented:
 * - routes that never look at who acts (public, the issuer, sign-in bookkeeping) and the person's
 *   own routes (routeAccess "personal"): what the person gets without the header, as the other;
 * - a removed member, or a member of another organization: 404 "Organization not found";
 * - a role without the capability the route needs: 403 organization_role;
 * - a role with it: what a signed-in account that owns none of the world's resources gets (the
 *   class's rule for the other, without the other's own exceptions), or `expect.member` where the
 *   organization's account answers differently, and why;
 * - the organization's key: what another person's key gets (refused off the gateway; no private app).
 */
function memberExpected(route: RouteRequest, key: string, caller: OrganizationCaller, ok: number): Expected {
  const override = route.expect?.[caller];
  if (override !== undefined) return { status: override };
  if (caller === "org-key")
    return { status: route.expect?.consumerKey ?? classStatus(route, "consumerKey", ok) };
  const [method = "GET", path = ""] = key.split(" ");
  // The organization's people have verified addresses: the other's exception (a verification
  // mail sent moments ago) is not theirs.
  const asPerson = { status: route.expect?.member ?? classStatus(route, "other", ok) };
  if (route.class === "public" || route.class === "issuer" || route.class === "token") return asPerson;
  const access = routeAccess(method, key.endsWith("(v1)") ? path.replace(/^\/api\//, "/api/v1/") : path);
  if (access === "personal") return asPerson;
  if (caller === "org-removed" || caller === "org-outsider")
    return { status: 404, message: "Organization not found" };
  const role = organizationRoles[memberRoles.indexOf(caller)] ?? "viewer";
  if (!roleMay(role, access)) return { status: 403, code: "organization_role" };
  return { status: route.expect?.member ?? classStatus(route, "other", ok) };
}

function expected(route: RouteRequest, key: string, role: Role, ok: number): Expected {
  if ((organizationCallers as readonly string[]).includes(role))
    return memberExpected(route, key, role as OrganizationCaller, ok);
  return { status: route.expect?.[role] ?? classStatus(route, role, ok) };
}

/** An error's code and message: ours (DESIGN.md §4), or OpenAI's shape on its routes. */
function errorOf(text: string): { code?: string; message?: string } {
  try {
    const body = JSON.parse(text) as { code?: string; message?: string; error?: unknown };
    return typeof body.error === "object" && body.error !== null ? body.error : body;
  } catch {
    return {};
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

  it("answers every route × person's credential with its class's status, never an unauthorized 2xx", async () => {
    // The owner's credentials last, so their deletes and changes do not alter what the others see.
    const others = personRoles.filter((role) => !["signedOut", "owner", "ownerKey"].includes(role));
    await checkMatrix(() => [others.map((role) => [role]), [["ownerKey"]], [["owner"]]], ["signedOut"]);
  });

  // After the persons' run, so its timing is theirs as before (a verification mail's minute).
  describe("acting for an organization", () => {
    beforeAll(async () => {
      organization = await addOrganization(world);
      const acting = (token: string) => ({ auth: token, organization: organization.id });
      Object.assign(credentials, {
        "org-owner": acting(organization.members.owner.token),
        "org-admin": acting(organization.members.admin.token),
        "org-developer": acting(organization.members.developer.token),
        "org-billing": acting(organization.members.billing.token),
        "org-viewer": acting(organization.members.viewer.token),
        "org-removed": acting(organization.removed.token),
        "org-outsider": acting(organization.outsider.token),
        // The organization's own key needs no header: the key names its account.
        "org-key": { auth: organization.key.key },
      });
    });

    it("answers every route × organization caller as its role allows, never an unauthorized 2xx", async () => {
      const members = organizationCallers.filter((role) => memberRoles.includes(role as never));
      const rest = [["org-removed"], ["org-outsider"], ["org-key"]] as Role[][];
      // All at once, as members acting together; but the members share one account, and what is
      // deleted is deleted once: the deletes one after another, in role order.
      await checkMatrix((route) => [
        route.last ? [members, ...rest] : [...members.map((role) => [role]), ...rest],
      ]);
    });
  });
});

/**
 * Asks every route (and its /api/v1 copy) as each caller of its `steps` (the same callers for every
 * route), one step after another; in a step, its lanes at once, each lane's callers in turn. Signed
 * out first (counted when `signedOut` is one of the callers): the issuer's routes answer a
 * credential as they answer none.
 */
async function checkMatrix(steps: (route: RouteRequest) => Role[][][], counted: Role[] = []): Promise<void> {
  const table = routeTable(world);
  const callers = [...counted, ...steps(table["GET /api/config"] as RouteRequest).flat(2)];
  const mismatches: string[] = [];
  let unauthorized2xx = 0;
  let checked = 0;
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
    const ask = async (role: Role) => {
      const { auth, organization: acting } = credentials[role];
      const answer = await world.server.app.inject({
        method: method as "GET",
        url: route.url,
        headers: {
          ...(auth ? { authorization: `Bearer ${auth}` } : {}),
          ...(acting ? { "promptmint-organization": acting } : {}),
          ...route.headers,
        },
        ...(route.payload !== undefined ? { payload: route.payload } : {}),
      });
      if (role === "signedOut") signedOutStatus = answer.statusCode;
      if (!callers.includes(role)) return;
      checked++;
      const want = expected(route, key, role, route.ok ?? 200);
      const wanted = want.status === "same-as-signed-out" ? signedOutStatus : want.status;
      const is2xx = answer.statusCode >= 200 && answer.statusCode < 300;
      if (is2xx && !(wanted !== undefined && wanted >= 200 && wanted < 300)) unauthorized2xx++;
      const body = errorOf(answer.body);
      if (
        answer.statusCode !== wanted ||
        answer.statusCode >= 500 ||
        (want.code !== undefined && body.code !== want.code) ||
        (want.message !== undefined && body.message !== want.message)
      )
        mismatches.push(
          `${key} as ${role}: ${answer.statusCode}, expected ${wanted} ${want.code ?? want.message ?? ""} ${answer.body.slice(0, 160)}`,
        );
    };
    if (callers.includes("signedOut") || route.class === "issuer") await ask("signedOut");
    for (const step of steps(route))
      await Promise.all(
        step.map((lane) =>
          lane.reduce((previous, role) => previous.then(() => ask(role)), Promise.resolve()),
        ),
      );
  }
  recordSecurityFigure("routes_roles_checked", checked);
  recordSecurityFigure("unauthorized_2xx", unauthorized2xx);
  expect(mismatches).toEqual([]);
  expect(unauthorized2xx).toBe(0);
  expect(checked).toBe(entries.length * callers.length);
  expect(entries.length).toBeGreaterThan(Object.keys(table).length + 50);
}
