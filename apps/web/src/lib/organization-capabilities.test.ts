import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { accountMay, ROLE_CAPABILITIES } from "./organization-capabilities";

// The API decides; the web app's copy only hides what a role cannot use. They must agree.
const membership = readFileSync(
  path.resolve(__dirname, "../../../api/src/modules/organizations/membership.ts"),
  "utf8",
);

describe("organization capabilities", () => {
  it("are the API's table, role by role", () => {
    const table = /ROLE_CAPABILITIES[^=]*=\s*\{([\s\S]*?)\n\};/.exec(membership)?.[1] ?? "";
    const apiRoles = Object.fromEntries(
      [...table.matchAll(/(\w+): new Set\(\[([^\]]*)\]\)/g)].map(([, role, list]) => [
        role,
        [...(list ?? "").matchAll(/"(\w+)"/g)].map((match) => match[1]).sort(),
      ]),
    );
    const webRoles = Object.fromEntries(
      Object.entries(ROLE_CAPABILITIES).map(([role, capabilities]) => [role, [...capabilities].sort()]),
    );
    expect(Object.keys(apiRoles)).toHaveLength(5);
    expect(webRoles).toEqual(apiRoles);
  });

  it("let a person acting for themselves do everything", () => {
    expect(accountMay(null, "manage")).toBe(true);
    expect(accountMay("developer", "read_billing")).toBe(false);
    expect(accountMay("billing", "billing")).toBe(true);
  });
});
