import {
  type AppHealth,
  EMPTY_IO_SCHEMA,
  EXPLORE_PAGE_SIZE,
  type ExploreApp,
  type ExploreAppDetail,
  type ExploreAppList,
  type ExploreQuerySchema,
  type ExploreSort,
  IoSchemaSchema,
  type RatingSummary,
} from "@promptmint/contracts";
import { and, eq, gte, ilike, inArray, lte, or, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Database, queryRows } from "../../db/client.ts";
import { type ApplicationRow, applications, creators, users } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { appNotSuspended } from "../admin/suspensions.ts";
import { utcDay } from "../analytics/rollups.ts";
import { creatorNameColumn } from "../applications/applications.service.ts";
import { listPackages } from "../billing/plans.ts";
import { effectivePriceCents, effectivePriceSql, priceFields } from "../billing/price-changes.ts";
import { offeredTrialCalls } from "../billing/sponsored/trials.ts";
import { publishedInputLimit } from "../gateway/call-worst-case.ts";
import { loadPrompt } from "../prompts/load-prompt.ts";
import { healthOfApps, windowStart } from "./app-health-figures.ts";
import { type RankSignals, rankApps } from "./ranking.ts";
import { ratingSummaries } from "./reviews.service.ts";

/** Who may find an app in Explore: live and public or embeddable (DESIGN.md §5). */
export const listed = and(
  eq(applications.status, "live"),
  inArray(applications.visibility, ["public", "embed"]),
  appNotSuspended,
);

/** What Explore shows beside an app: its rating and measured health (docs/decisions/081). */
interface TrustFigures {
  rating: RatingSummary;
  health: AppHealth;
}

function toExploreApp(row: ApplicationRow, creatorName: string, trust: TrustFigures): ExploreApp {
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
    rating: trust.rating,
    health: trust.health,
  };
}

/** The rating and health of each app, read from the reviews and the rollups. */
async function trustFiguresOf(db: Database, ids: string[]): Promise<Map<string, TrustFigures>> {
  const [ratings, health] = await Promise.all([ratingSummaries(db, ids), healthOfApps(db, ids)]);
  return new Map(
    ids.map((id) => {
      const { average, count } = ratings.get(id) ?? { average: null, count: 0 };
      return [id, { rating: { average, count }, health: health.get(id) as AppHealth }];
    }),
  );
}

/**
 * What ranks each matching app (ranking.ts): price and dates from the app, ratings from the
 * reviews, callers and calls of the last 30 days from the rollups (app_users, app_daily_stats).
 */
async function rankSignalsOf(
  db: Database,
  where: SQL | undefined,
): Promise<(RankSignals & { id: string })[]> {
  const apps = await db
    .select({
      id: applications.id,
      slug: applications.slug,
      priceCents: effectivePriceSql(applications),
      createdAt: applications.createdAt,
      updatedAt: applications.updatedAt,
    })
    .from(applications)
    .where(where);
  if (apps.length === 0) return [];
  const ids = apps.map((app) => app.id);
  const idArray = `{${ids.join(",")}}`;
  const from = windowStart(utcDay(new Date()));
  const [ratings, calls, callers] = await Promise.all([
    ratingSummaries(db, ids),
    queryRows<{ id: string; calls: number }>(
      db,
      sql`select application_id as id, sum(invocations)::float8 as calls from app_daily_stats
          where application_id = any(${idArray}::uuid[]) and day >= ${from}::date group by 1`,
    ),
    queryRows<{ id: string; callers: number }>(
      db,
      sql`select application_id as id, count(*)::int as callers from app_users
          where application_id = any(${idArray}::uuid[]) and last_day >= ${from}::date group by 1`,
    ),
  ]);
  const callsOf = new Map(calls.map((row) => [row.id, row.calls]));
  const callersOf = new Map(callers.map((row) => [row.id, row.callers]));
  return apps.map((app) => ({
    ...app,
    priceCents: Number(app.priceCents),
    calls30d: callsOf.get(app.id) ?? 0,
    callers30d: callersOf.get(app.id) ?? 0,
    ratingCount: ratings.get(app.id)?.count ?? 0,
    ratingSum: ratings.get(app.id)?.sum ?? 0,
  }));
}

/** `%`, `_` and `\` in a search are matched literally. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

export async function listExploreApps(
  db: Database,
  query: Omit<z.output<typeof ExploreQuerySchema>, "sort"> & { sort?: ExploreSort },
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

  // Every matching app is ranked, then one page is read (docs/decisions/081: the catalogue is
  // ranked per request from the rollups; at tens of thousands of apps the scores become a table).
  const ranked = rankApps(
    await rankSignalsOf(db, and(...conditions)),
    query.sort ?? "recommended",
    new Date(),
  );
  const offset = (query.page - 1) * EXPLORE_PAGE_SIZE;
  const pageIds = ranked.slice(offset, offset + EXPLORE_PAGE_SIZE).map((app) => app.id);
  const [rows, trust] = await Promise.all([
    pageIds.length === 0
      ? []
      : db
          .select({ app: applications, creatorName: creatorNameColumn })
          .from(applications)
          .innerJoin(users, eq(users.id, applications.ownerId))
          .leftJoin(creators, eq(creators.userId, users.id))
          .where(inArray(applications.id, pageIds)),
    trustFiguresOf(db, pageIds),
  ]);
  const byId = new Map(rows.map((row) => [row.app.id, row]));
  const data = pageIds.flatMap((id) => {
    const row = byId.get(id);
    const figures = trust.get(id);
    return row && figures ? [toExploreApp(row.app, row.creatorName, figures)] : [];
  });
  return {
    data,
    page: query.page,
    page_size: EXPLORE_PAGE_SIZE,
    total: ranked.length,
    has_more: offset + pageIds.length < ranked.length,
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
  const [packages, trust] = await Promise.all([listPackages(db, app), trustFiguresOf(db, [app.id])]);
  const plans = packages.filter((plan) => plan.is_active);
  return {
    ...toExploreApp(app, creatorName, trust.get(app.id) as TrustFigures),
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
