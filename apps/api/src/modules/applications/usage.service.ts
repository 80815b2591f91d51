import type { AppUsage } from "@promptmint/contracts";
import { and, eq, gte, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { invocations } from "../../db/schema/index.ts";
import type { ApplicationRow } from "./applications.service.ts";

/** Invocations and revenue (charged cents of successful calls, in dollars), all time or for a window. */
export async function getUsage(db: Database, app: ApplicationRow, days?: number): Promise<AppUsage> {
  const window = days ? gte(invocations.createdAt, new Date(Date.now() - days * 86_400_000)) : undefined;
  const [row] = await db
    .select({
      total: sql<number>`count(*)::int`,
      revenueCents: sql<number>`coalesce(sum(${invocations.chargedCents}) filter (where ${invocations.status} = 'success'), 0)::bigint`,
    })
    .from(invocations)
    .where(and(eq(invocations.applicationId, app.id), window));
  return { total_invocations: row?.total ?? 0, total_revenue: Number(row?.revenueCents ?? 0) / 100 };
}
