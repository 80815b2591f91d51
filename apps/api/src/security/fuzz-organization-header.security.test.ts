import { isUuid, type OrganizationRole } from "@promptmint/contracts";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeAccess } from "../modules/organizations/access.ts";
import { roleMay } from "../modules/organizations/membership.ts";
import type { Caller } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { addOrganization, type OrganizationWorld } from "./organization-world.ts";
import { recordSecurityFigure } from "./report.ts";
import { createWorld, type World } from "./world.ts";

/**
 * `Promptmint-Organization` itself, fuzzed (issue 43, decision 084) on a sample of routes, each
 * class's kind: random strings, random uuids, the ids of persons, of the organization and of
 * another, those ids bent (case, spaces, a character more or less), very long values and several
 * values, sent by members of each role, a removed member, another organization's owner and a
 * stranger. Never a 5xx; a 2xx only when the value names an organization the caller may act for
 * with this route (or the route is the person's own), and then with none of another account's
 * data; otherwise exactly the guard's refusal (400 naming the header, 404, 403 organization_role).
 */
const CASES_PER_ROUTE = Number(process.env.FUZZ_CASES_PER_ROUTE ?? 1_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const FUZZ_TIMEOUT_MS = 20 * 60_000;
const HEADER = "promptmint-organization";
const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";

interface SampledRoute {
  key: string;
  url: string;
  payload?: object;
  /** What a 2xx may not contain: another account's data. */
  leaks(body: string, caller: Caller): string | undefined;
}

let testDb: TestDatabase;
let world: World;
let organization: OrganizationWorld;
let routes: SampledRoute[];
let callers: { name: string; caller: Caller; memberOf: Record<string, OrganizationRole> }[];
let knownIds: string[];

beforeAll(async () => {
  testDb = await createTestDatabase({ memory: true });
  world = await createWorld(testDb, {
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000",
    OIDC_ACCESS_TOKEN_TTL_SECONDS: String(Math.ceil(FUZZ_TIMEOUT_MS / 1000) + 600),
  });
  organization = await addOrganization(world);
  const { id, members, outsiderOrganizationId } = organization;
  const worldData = [
    world.promptApp.slug,
    world.chatApp.slug,
    world.workflowApp.slug,
    world.ownerKey.id,
    world.cardId,
    world.spareCardId,
  ];
  const foreign = (body: string) => worldData.find((value) => body.includes(value));
  routes = [
    { key: "GET /api/auth/profile/", url: "/api/auth/profile/", leaks: profileOfAnother },
    { key: "GET /api/app/", url: "/api/app/", leaks: foreign },
    { key: "GET /api/keys/", url: "/api/keys/", leaks: foreign },
    { key: "POST /api/keys/", url: "/api/keys/", payload: { name: "fuzzed" }, leaks: keyOfAnother },
    // The world's owner funded their wallet: an organization's is empty.
    {
      key: "GET /api/wallet/",
      url: "/api/wallet/",
      leaks: (body) => (JSON.parse(body).balance_micros === 0 ? undefined : "a funded wallet"),
    },
    {
      key: "GET /api/app/{app}/payment-methods/",
      url: `/api/v1/app/${world.otherApp.slug}/payment-methods/`,
      leaks: foreign,
    },
    // The world owner's private app and a paid call of it: no organization's.
    { key: "GET /api/app/{slug}/", url: `/api/app/${world.promptApp.slug}/`, leaks: () => "their app" },
    {
      key: "POST /api/app/{slug}/completion-messages",
      url: `/api/app/${world.promptApp.slug}/completion-messages`,
      payload: { inputs: { query: "hi" }, user: "fuzz" },
      leaks: () => "a call of their app",
    },
  ];
  callers = [
    ...(["owner", "admin", "developer", "billing", "viewer"] as const).map((role) => ({
      name: role,
      caller: members[role],
      memberOf: { [id]: role },
    })),
    // The world's owner made the organization: its owner, and the owner of the world's data.
    { name: "world owner", caller: world.owner, memberOf: { [id]: "owner" as const } },
    { name: "removed", caller: organization.removed, memberOf: {} },
    {
      name: "outsider",
      caller: organization.outsider,
      memberOf: { [outsiderOrganizationId]: "owner" as const },
    },
    { name: "stranger", caller: world.other, memberOf: {} },
  ];
  knownIds = [id, outsiderOrganizationId, ...Object.values(organization.personIds), NO_SUCH_ID];
});
afterAll(async () => {
  await world?.stop();
  await testDb?.destroy();
});

function profileOfAnother(body: string, caller: Caller): string | undefined {
  const profile = JSON.parse(body) as { email?: string; user?: { email?: string } };
  const email = profile.email ?? profile.user?.email;
  return email === caller.email ? undefined : `the profile of ${email}`;
}

function keyOfAnother(body: string): string | undefined {
  const made = JSON.parse(body) as { made_by?: { user_id: string } | null };
  return made.made_by ? undefined : "a person's key";
}

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  maxLength: 80,
});
const headerValues = () =>
  fc.oneof(
    printable,
    fc.uuid(),
    fc.constantFrom(...knownIds),
    fc
      .constantFrom(...knownIds)
      .chain((id) =>
        fc.constantFrom(
          id.toUpperCase(),
          ` ${id}\t`,
          `${id}x`,
          id.slice(1),
          id.replace(/-/g, ""),
          `{${id}}`,
          `${id},${id}`,
          `${id}%00`,
        ),
      ),
    fc
      .integer({ min: 1_000, max: 20_000 })
      .chain((length) =>
        fc.constantFrom(
          "a".repeat(length),
          `${knownIds[0]}${"0".repeat(length)}`,
          knownIds[0]?.repeat(length / 36),
        ),
      ),
    fc.array(fc.constantFrom(...knownIds), { minLength: 2, maxLength: 4 }),
  );

/** The guard's answer (authenticate.ts actForOrganization) to this caller, value and route. */
function expectedAnswer(
  route: SampledRoute,
  memberOf: Record<string, OrganizationRole>,
  value: string | string[] | undefined,
): { status: "2xx" | 400 | 403 | 404; code?: string } {
  const [method = "GET", path = ""] = route.key.split(" ");
  const access = routeAccess(method, path);
  if (access === "personal") return { status: "2xx" };
  const id = typeof value === "string" ? value.trim() : "";
  if (!isUuid(id)) return { status: 400 };
  const role = memberOf[id.toLowerCase()];
  if (!role) return { status: 404 };
  if (!roleMay(role, access)) return { status: 403, code: "organization_role" };
  // Acting for the organization, the world owner's app is another account's.
  return route.key.includes("{slug}") ? { status: 404 } : { status: "2xx" };
}

describe("fuzzing the Promptmint-Organization header", () => {
  // Found by the fuzzing: the id as written in capitals passed the guard but not the key's maker
  // check (`member.organizationId !== user.id`), a 403 for a member who may make keys.
  it("reads the organization's id in any case, padded or not", async () => {
    for (const value of [organization.id.toUpperCase(), ` ${organization.id} `]) {
      const made = await organization.members.developer.api("POST", "/api/keys/", {
        body: { name: "any case" },
        headers: { [HEADER]: value },
      });
      expect([made.status, made.body.made_by?.user_id]).toEqual([201, organization.personIds.developer]);
    }
  });

  it(
    `answers ${CASES_PER_ROUTE} generated header values per sampled route as the guard promises`,
    async () => {
      const failures: string[] = [];
      let cases = 0;
      let fiveHundreds = 0;
      let accepted = 0;
      let unauthorized2xx = 0;
      const sample = fc.record({ caller: fc.nat(callers.length - 1), value: headerValues() });
      for (const [index, route] of routes.entries()) {
        const [method = "GET"] = route.key.split(" ");
        for (const { caller: which, value } of fc.sample(sample, {
          numRuns: CASES_PER_ROUTE,
          seed: SEED + index,
        })) {
          const { name, caller, memberOf } = callers[which] ?? (callers[0] as (typeof callers)[number]);
          const answer = await world.server.app.inject({
            method: method as "GET",
            url: route.url,
            headers: { authorization: `Bearer ${caller.token}`, [HEADER]: value },
            ...(route.payload ? { payload: route.payload } : {}),
          });
          cases++;
          if (answer.statusCode >= 500) fiveHundreds++;
          const want = expectedAnswer(route, memberOf, value);
          const is2xx = answer.statusCode >= 200 && answer.statusCode < 300;
          const body = answer.body;
          const problem =
            want.status === "2xx"
              ? is2xx
                ? route.leaks(body, caller)
                : "refused"
              : answer.statusCode !== want.status
                ? `expected ${want.status}`
                : want.status === 400 && !JSON.parse(body).fields?.[HEADER]
                  ? "a 400 not naming the header"
                  : want.code && JSON.parse(body).code !== want.code
                    ? `expected ${want.code}`
                    : undefined;
          if (is2xx) accepted++;
          if (is2xx && problem) unauthorized2xx++;
          if (problem && failures.length < 30)
            failures.push(
              `${route.key} as ${name} with ${JSON.stringify(value).slice(0, 80)}: ${answer.statusCode} ${problem} ${body.slice(0, 160)}`,
            );
        }
      }
      recordSecurityFigure("fuzz_cases", cases);
      recordSecurityFigure("fuzz_5xx", fiveHundreds);
      recordSecurityFigure("unauthorized_2xx", unauthorized2xx);
      expect(failures).toEqual([]);
      expect(fiveHundreds).toBe(0);
      expect(cases).toBe(routes.length * CASES_PER_ROUTE);
      // The values that name the organization do reach it: the refusals are not all there is.
      expect(accepted).toBeGreaterThan(CASES_PER_ROUTE / 10);
    },
    FUZZ_TIMEOUT_MS,
  );
});
