import type { OrganizationUsage } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { CAPABILITY_TEXT } from "./access.ts";
import { findMembership, roleMay } from "./membership.ts";

/**
 * An organization's usage in one UTC month (issue 43): its customer calls (invocations it paid
 * for as caller, `purpose = customer`), answered ones counted, with what they were charged, by
 * the member who made them, by key (null: calls made signed in) and by app. Only members who may
 * see its money (owner, admin, billing) may read it.
 */
export async function organizationUsage(
  db: Database,
  person: LocalUser,
  options: { organizationId: string; month?: string },
): Promise<OrganizationUsage> {
  const membership = await findMembership(db, options.organizationId, person.id);
  if (!membership) throw notFound("Organization");
  const { organization, role } = membership;
  if (!roleMay(role, "read_billing"))
    throw new AppError(
      "organization_role",
      `Your role in ${organization.displayName} is ${role}: a ${role} may not ${CAPABILITY_TEXT.read_billing}. Ask an owner or admin of ${organization.displayName} for a role that may.`,
    );
  const month = options.month ?? new Date().toISOString().slice(0, 7);
  const start = `${month}-01T00:00:00Z`;
  const rows = await queryRows<{
    member_id: string | null;
    member_name: string | null;
    key_id: string | null;
    key_name: string | null;
    slug: string;
    app_name: string;
    calls: number;
    charged: string;
  }>(
    db,
    sql`select i.member_id, u.display_name as member_name, i.api_key_id as key_id, k.name as key_name,
          a.slug, a.name as app_name, count(*)::int as calls, sum(i.charged_cents)::text as charged
        from invocations i
        join applications a on a.id = i.application_id
        left join users u on u.id = i.member_id
        left join api_keys k on k.id = i.api_key_id
        where i.caller_user_id = ${options.organizationId}::uuid and i.purpose = 'customer'
          and i.status = 'success'
          and i.created_at >= ${start}::timestamptz and i.created_at < ${start}::timestamptz + interval '1 month'
        group by i.member_id, u.display_name, i.api_key_id, k.name, a.slug, a.name`,
  );
  type Line = { id: string | null; name: string; calls: number; charged_cents: number };
  /** The rows summed by what `key` names: the line's id, its name, and the group it falls in. */
  const lines = (key: (row: (typeof rows)[number]) => [string | null, string, string]): Line[] => {
    const byId = new Map<string, Line>();
    for (const row of rows) {
      const [id, name, group] = key(row);
      const line = byId.get(group) ?? { id, name, calls: 0, charged_cents: 0 };
      line.calls += row.calls;
      line.charged_cents += Number(row.charged);
      byId.set(group, line);
    }
    return [...byId.values()].sort((a, b) => b.charged_cents - a.charged_cents || b.calls - a.calls);
  };
  const total = rows.reduce(
    (sum, row) => ({ calls: sum.calls + row.calls, charged_cents: sum.charged_cents + Number(row.charged) }),
    { calls: 0, charged_cents: 0 },
  );
  return {
    month,
    total,
    by_member: lines((row) => [row.member_id, row.member_name ?? "No member", row.member_id ?? ""]).map(
      ({ id, ...line }) => ({ user_id: id, ...line }),
    ),
    by_key: lines((row) => [row.key_id, row.key_name ?? "Signed-in calls", row.key_id ?? ""]).map(
      ({ id, ...line }) => ({ key_id: id, ...line }),
    ),
    by_app: lines((row) => [row.slug, row.app_name, row.slug]).map(({ id, ...line }) => ({
      slug: id ?? "",
      ...line,
    })),
  };
}
