import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../db/client.ts";

/**
 * The model cost taken so far from a creator for their apps' calls (micro-dollars): from each paid
 * call's share when its hold settles, and the rest by the model-cost sweep once it posted it
 * (billing/model-costs.ts). A creator earns price − fee − this (docs/decisions/030); tests of
 * earnings take the difference of two readings rather than assume a free model.
 */
export async function modelCostTaken(db: Database, creatorId: string): Promise<number> {
  const [row] = await queryRows<{ micros: string }>(
    db,
    sql`select coalesce(sum(i.model_cost_deducted_micros
              + case when i.model_cost_posted_at is not null
                     then i.model_cost_micros - i.model_cost_deducted_micros else 0 end), 0)::text as micros
        from invocations i join applications a on a.id = i.application_id
        where a.owner_id = ${creatorId}::uuid`,
  );
  return Number(row?.micros ?? 0);
}
