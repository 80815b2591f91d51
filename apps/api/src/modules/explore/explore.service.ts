import {
  EMPTY_IO_SCHEMA,
  EXPLORE_PAGE_SIZE,
  type ExploreApp,
  type ExploreAppDetail,
  type ExploreAppList,
  type ExploreQuerySchema,
  IoSchemaSchema,
} from "@promptmint/contracts";
import { and, desc, eq, gte, ilike, inArray, lte, or, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications, creators, users } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { appNotSuspended } from "../admin/suspensions.ts";
import { creatorNameColumn } from "../applications/applications.service.ts";
import { listPackages } from "../billing/plans.ts";
import { effectivePriceCents, effectivePriceSql, priceFields } from "../billing/price-changes.ts";
import { offeredTrialCalls } from "../billing/sponsored/trials.ts";
import { publishedInputLimit } from "../gateway/call-worst-case.ts";
import { loadPrompt } from "../prompts/load-prompt.ts";

/** Who may find an app in Explore: live and public or embeddable (DESIGN.md §5). */
export const listed = and(
  eq(applications.status, "live"),
  inArray(applications.visibility, ["public", "embed"]),
  appNotSuspended,
);

function toExploreApp(row: ApplicationRow, creatorName: string): ExploreApp {
  return {
    name: row.name,
    slug: row.slug,
    description: row.description,
    type: row.type,
    interaction_mode: row.interactionMode,
    ...priceFields(row),
    creator_name: creatorName,
    updated_at: row.updatedAt.toISOString(),
    accepts_tools: row.type === "prompt" && row.allowTools,
  };
}

/** `%`, `_` and `\` in a search are matched literally. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

export async function listExploreApps(
  db: Database,
  query: z.output<typeof ExploreQuerySchema>,
): Promise<ExploreAppList> {
  const conditions: (SQL | undefined)[] = [listed];
  if (query.q) {
    const pattern = likePattern(query.q);
    conditions.push(or(ilike(applications.name, pattern), ilike(applications.description, pattern)));
  }
  if (query.type) conditions.push(eq(applications.type, query.type));
  if (query.mode) conditions.push(eq(applications.interactionMode, query.mode));
  const price = effectivePriceSql(applications);
  if (query.min_price_cents !== undefined) conditions.push(gte(price, query.min_price_cents));
  if (query.max_price_cents !== undefined) conditions.push(lte(price, query.max_price_cents));
  const where = and(...conditions);

  const offset = (query.page - 1) * EXPLORE_PAGE_SIZE;
  const [rows, [counted]] = await Promise.all([
    db
      .select({ app: applications, creatorName: creatorNameColumn })
      .from(applications)
      .innerJoin(users, eq(users.id, applications.ownerId))
      .leftJoin(creators, eq(creators.userId, users.id))
      .where(where)
      .orderBy(desc(applications.updatedAt), applications.slug)
      .limit(EXPLORE_PAGE_SIZE)
      .offset(offset),
    db.select({ total: sql<number>`count(*)::int` }).from(applications).where(where),
  ]);
  const total = counted?.total ?? 0;
  return {
    data: rows.map((row) => toExploreApp(row.app, row.creatorName)),
    page: query.page,
    page_size: EXPLORE_PAGE_SIZE,
    total,
    has_more: offset + rows.length < total,
  };
}

/** A listed app by slug; any other app answers like a missing one. */
export async function findListedApp(db: Database, slug: string) {
  const [row] = await db
    .select({ app: applications, creatorName: creatorNameColumn })
    .from(applications)
    .innerJoin(users, eq(users.id, applications.ownerId))
    .leftJoin(creators, eq(creators.userId, users.id))
    .where(and(eq(applications.slug, slug), listed))
    .limit(1);
  if (!row) throw notFound("Application");
  return row;
}

export async function getExploreApp(
  db: Database,
  slug: string,
  { feePercent }: { feePercent: number },
): Promise<ExploreAppDetail> {
  const { app, creatorName } = await findListedApp(db, slug);
  const loaded = app.type === "prompt" ? await loadPrompt(db, app) : null;
  const inputSchema = loaded ? IoSchemaSchema.parse(loaded.active.inputSchema) : EMPTY_IO_SCHEMA;
  const plans = (await listPackages(db, app)).filter((plan) => plan.is_active);
  return {
    ...toExploreApp(app, creatorName),
    input_schema: inputSchema,
    takes_query:
      app.type === "workflow" ||
      app.interactionMode === "chat" ||
      Object.keys(inputSchema.properties).length === 0,
    plans,
    max_input_tokens: publishedInputLimit(loaded?.prompt ?? null, effectivePriceCents(app), feePercent),
    trial_calls: await offeredTrialCalls(db, app),
  };
}
