import type {
  AppPerformance,
  AppUsageAnalytics,
  GlobalDashboard,
  MoneyFigures,
  OwnerVersionFigures,
  RecentInvocations,
  VersionFigures,
} from "@promptmint/contracts";
import { and, desc, eq, gte, inArray, isNull, notInArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  appDailyStats,
  appLabels,
  applications,
  appUsers,
  appVersionDailyStats,
  appVersions,
  invocations,
  ownerDailyErrors,
  ownerDailyStats,
  ownerUsers,
  prompts,
} from "../../db/schema/index.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";
import { utcDay } from "./rollups.ts";

const DAY_MS = 86_400_000;

/** The window's UTC days, oldest first, ending today. */
export function windowDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => utcDay(new Date(today - (days - 1 - i) * DAY_MS)));
}

const percent = (part: number, whole: number) => (whole > 0 ? (part / whole) * 100 : 0);
const seconds = (latencyMs: number, count: number) => (count > 0 ? latencyMs / count / 1000 : 0);

interface DayTotals {
  invocations: number;
  successes: number;
  errors: number;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  revenueCents: number;
  feeMicros: number;
  modelCostMicros: number;
}

const totals = {
  invocations: sql<number>`coalesce(sum(${appDailyStats.invocations}), 0)::int`,
  successes: sql<number>`coalesce(sum(${appDailyStats.successes}), 0)::int`,
  errors: sql<number>`coalesce(sum(${appDailyStats.errors}), 0)::int`,
  latencyMs: sql<number>`coalesce(sum(${appDailyStats.latencyMsSum}), 0)::bigint`,
  inputTokens: sql<number>`coalesce(sum(${appDailyStats.inputTokens}), 0)::bigint`,
  outputTokens: sql<number>`coalesce(sum(${appDailyStats.outputTokens}), 0)::bigint`,
  revenueCents: sql<number>`coalesce(sum(${appDailyStats.revenueCents}), 0)::bigint`,
  feeMicros: sql<number>`coalesce(sum(${appDailyStats.feeMicros}), 0)::bigint`,
  modelCostMicros: sql<number>`coalesce(sum(${appDailyStats.modelCostMicros}), 0)::bigint`,
};

function numeric(row: Record<keyof DayTotals, unknown>): DayTotals {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as unknown as DayTotals;
}

const ownerTotals = {
  invocations: sql<number>`coalesce(sum(${ownerDailyStats.invocations}), 0)::int`,
  successes: sql<number>`coalesce(sum(${ownerDailyStats.successes}), 0)::int`,
  errors: sql<number>`coalesce(sum(${ownerDailyStats.errors}), 0)::int`,
  latencyMs: sql<number>`coalesce(sum(${ownerDailyStats.latencyMsSum}), 0)::bigint`,
  inputTokens: sql<number>`coalesce(sum(${ownerDailyStats.inputTokens}), 0)::bigint`,
  outputTokens: sql<number>`coalesce(sum(${ownerDailyStats.outputTokens}), 0)::bigint`,
};

/** The owner's series: at most (days × shards) rows, whatever the number of apps. */
async function ownerDailyTotals(
  db: Database,
  ownerId: string,
  from: string,
): Promise<Map<string, DayTotals>> {
  const rows = await db
    .select({ day: ownerDailyStats.day, ...ownerTotals })
    .from(ownerDailyStats)
    .where(and(eq(ownerDailyStats.ownerId, ownerId), gte(ownerDailyStats.day, from)))
    .groupBy(ownerDailyStats.day);
  // The dashboard shows no revenue, so the owner rollup does not keep it.
  return new Map(
    rows.map(({ day, ...rest }) => [
      String(day),
      numeric({ ...rest, revenueCents: 0, feeMicros: 0, modelCostMicros: 0 }),
    ]),
  );
}

async function dailyTotals(db: Database, appIds: string[], from: string): Promise<Map<string, DayTotals>> {
  if (appIds.length === 0) return new Map();
  const rows = await db
    .select({ day: appDailyStats.day, ...totals })
    .from(appDailyStats)
    .where(and(inArray(appDailyStats.applicationId, appIds), gte(appDailyStats.day, from)))
    .groupBy(appDailyStats.day);
  return new Map(rows.map(({ day, ...rest }) => [String(day), numeric(rest)]));
}

/** Users whose latest call is inside the window: exactly the distinct users of the window. */
async function appDistinctUsers(db: Database, appId: string, from: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(appUsers)
    .where(and(eq(appUsers.applicationId, appId), gte(appUsers.lastDay, from)));
  return row?.n ?? 0;
}

async function ownerDistinctUsers(db: Database, ownerId: string, from: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(ownerUsers)
    .where(and(eq(ownerUsers.ownerId, ownerId), gte(ownerUsers.lastDay, from)));
  return row?.n ?? 0;
}

const empty: DayTotals = {
  invocations: 0,
  successes: 0,
  errors: 0,
  latencyMs: 0,
  inputTokens: 0,
  outputTokens: 0,
  revenueCents: 0,
  feeMicros: 0,
  modelCostMicros: 0,
};
const sum = (values: DayTotals[]) =>
  values.reduce(
    (acc, v) => {
      for (const key of Object.keys(acc) as (keyof DayTotals)[]) acc[key] += v[key];
      return acc;
    },
    { ...empty },
  );

export async function getDashboard(db: Database, ownerId: string, days: number): Promise<GlobalDashboard> {
  const dates = windowDays(days);
  const from = dates[0] as string;
  const apps = await db
    .select({
      id: applications.id,
      name: applications.name,
      slug: applications.slug,
      type: applications.type,
    })
    .from(applications)
    // An archived app (deleted with money history, decision 023) is gone from the creator's apps;
    // its calls stay in the owner's totals, which they were paid in.
    .where(and(eq(applications.ownerId, ownerId), isNull(applications.archivedAt)));
  const appIds = apps.map((a) => a.id);
  const [byDay, users, perApp, errors] = await Promise.all([
    ownerDailyTotals(db, ownerId, from),
    ownerDistinctUsers(db, ownerId, from),
    // One row per app and day once compactRollups() has folded the finished days' shards.
    appIds.length
      ? db
          .select({
            applicationId: appDailyStats.applicationId,
            lastUsed: sql<string>`max(${appDailyStats.lastInvocationAt})`,
            invocations: totals.invocations,
            successes: totals.successes,
            latencyMs: totals.latencyMs,
          })
          .from(appDailyStats)
          .where(and(inArray(appDailyStats.applicationId, appIds), gte(appDailyStats.day, from)))
          .groupBy(appDailyStats.applicationId)
      : Promise.resolve([]),
    db
      .select({
        errorType: ownerDailyErrors.errorType,
        count: sql<number>`sum(${ownerDailyErrors.count})::int`,
      })
      .from(ownerDailyErrors)
      .where(and(eq(ownerDailyErrors.ownerId, ownerId), gte(ownerDailyErrors.day, from)))
      .groupBy(ownerDailyErrors.errorType)
      .having(sql`sum(${ownerDailyErrors.count}) <> 0`)
      .orderBy(desc(sql`sum(${ownerDailyErrors.count})`)),
  ]);
  const series = dates.map((date) => ({ date, ...(byDay.get(date) ?? empty) }));
  const all = sum(series);
  const appStats = new Map(
    perApp.map((row) => [
      row.applicationId,
      {
        lastUsed: row.lastUsed,
        invocations: Number(row.invocations),
        successes: Number(row.successes),
        latencyMs: Number(row.latencyMs),
      },
    ]),
  );
  return {
    overview: {
      total_applications: apps.length,
      total_invocations: all.invocations,
      total_users: users,
      success_rate: percent(all.successes, all.invocations),
    },
    time_series: {
      data: series.map((d) => ({
        date: d.date,
        invocations: d.invocations,
        success_count: d.successes,
        error_count: d.errors,
        avg_response_time: seconds(d.latencyMs, d.invocations),
        input_tokens: d.inputTokens,
        output_tokens: d.outputTokens,
      })),
    },
    applications: apps
      .map((app) => {
        const stats = appStats.get(app.id);
        return {
          application_name: app.name,
          application_slug: app.slug,
          application_type: app.type,
          invocations: stats?.invocations ?? 0,
          success_rate: percent(stats?.successes ?? 0, stats?.invocations ?? 0),
          avg_response_time: seconds(stats?.latencyMs ?? 0, stats?.invocations ?? 0),
          last_used: stats?.lastUsed ? new Date(stats.lastUsed).toISOString() : "",
        };
      })
      .sort((a, b) => b.invocations - a.invocations || a.application_name.localeCompare(b.application_name)),
    errors: errors.map((e) => ({ error_type: e.errorType || null, count: e.count })),
  };
}

const versionTotals = {
  invocations: sql<number>`coalesce(sum(${appVersionDailyStats.invocations}), 0)::int`,
  successes: sql<number>`coalesce(sum(${appVersionDailyStats.successes}), 0)::int`,
  errors: sql<number>`coalesce(sum(${appVersionDailyStats.errors}), 0)::int`,
  latencyMs: sql<number>`coalesce(sum(${appVersionDailyStats.latencyMsSum}), 0)::bigint`,
  inputTokens: sql<number>`coalesce(sum(${appVersionDailyStats.inputTokens}), 0)::bigint`,
  outputTokens: sql<number>`coalesce(sum(${appVersionDailyStats.outputTokens}), 0)::bigint`,
  revenueCents: sql<number>`coalesce(sum(${appVersionDailyStats.revenueCents}), 0)::bigint`,
  feeMicros: sql<number>`coalesce(sum(${appVersionDailyStats.feeMicros}), 0)::bigint`,
  modelCostMicros: sql<number>`coalesce(sum(${appVersionDailyStats.modelCostMicros}), 0)::bigint`,
  modelCostDeductedMicros: sql<number>`coalesce(sum(${appVersionDailyStats.modelCostDeductedMicros}), 0)::bigint`,
};

type VersionTotals = DayTotals & { modelCostDeductedMicros: number };

/**
 * The apps' per-version totals over the window, from the per-version rollups: at most
 * (days × versions × shards) rows per app, one per version and day once folded, whatever the calls.
 */
async function versionTotalsOf(
  db: Database,
  appIds: string[],
  from: string,
): Promise<Map<string, Map<number, VersionTotals>>> {
  const byApp = new Map<string, Map<number, VersionTotals>>();
  if (appIds.length === 0) return byApp;
  const rows = await db
    .select({
      applicationId: appVersionDailyStats.applicationId,
      version: appVersionDailyStats.version,
      ...versionTotals,
    })
    .from(appVersionDailyStats)
    .where(and(inArray(appVersionDailyStats.applicationId, appIds), gte(appVersionDailyStats.day, from)))
    .groupBy(appVersionDailyStats.applicationId, appVersionDailyStats.version);
  for (const { applicationId, version, ...rest } of rows) {
    const versions = byApp.get(applicationId) ?? new Map<number, VersionTotals>();
    versions.set(version, numeric(rest as Record<keyof DayTotals, unknown>) as VersionTotals);
    byApp.set(applicationId, versions);
  }
  return byApp;
}

/** The version each prompt app's `production` label points at now. */
async function productionVersionsOf(db: Database, appIds: string[]): Promise<Map<string, number>> {
  if (appIds.length === 0) return new Map();
  const rows = await db
    .select({ applicationId: appLabels.applicationId, version: appVersions.version })
    .from(appLabels)
    .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
    .innerJoin(prompts, eq(prompts.applicationId, appLabels.applicationId))
    .where(and(inArray(appLabels.applicationId, appIds), eq(appLabels.name, "production")));
  return new Map(rows.map((row) => [row.applicationId, row.version]));
}

function versionFigures(
  version: number | null,
  production: boolean,
  t: DayTotals,
  deducted: number | null,
): VersionFigures {
  const money = moneyFigures(0, t);
  return {
    version,
    production,
    invocations: t.invocations,
    success_count: t.successes,
    error_count: t.errors,
    success_rate: percent(t.successes, t.invocations),
    avg_response_time: seconds(t.latencyMs, t.invocations),
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    gross_micros: money.gross_micros,
    fee_micros: money.fee_micros,
    model_cost_micros: money.model_cost_micros,
    model_cost_deducted_micros: deducted,
    net_micros: money.net_micros,
  };
}

/**
 * An app's window broken down by version, newest first: each version's rollup, then "no version"
 * (version null): what the app's rollup holds beyond its versions' (workflow apps, calls from
 * before versions), so the rows add up to `appTotal` exactly. The production version is listed
 * even without calls in the window.
 */
export function byVersion(
  appTotal: DayTotals,
  versions: Map<number, VersionTotals> | undefined,
  production: number | null,
): VersionFigures[] {
  const rows = [...(versions ?? new Map<number, VersionTotals>()).entries()];
  if (production !== null && !versions?.has(production))
    rows.push([production, { ...empty, modelCostDeductedMicros: 0 }]);
  rows.sort(([a], [b]) => b - a);
  const figures = rows.map(([version, t]) =>
    versionFigures(version, version === production, t, t.modelCostDeductedMicros),
  );
  const rest = { ...appTotal };
  for (const [, t] of rows) for (const key of Object.keys(rest) as (keyof DayTotals)[]) rest[key] -= t[key];
  if (Object.values(rest).some((value) => value !== 0)) figures.push(versionFigures(null, false, rest, null));
  return figures;
}

export async function getAppUsage(
  db: Database,
  app: ApplicationRow,
  days: number,
): Promise<AppUsageAnalytics> {
  const dates = windowDays(days);
  const from = dates[0] as string;
  const [byDay, users, versions, production] = await Promise.all([
    dailyTotals(db, [app.id], from),
    appDistinctUsers(db, app.id, from),
    versionTotalsOf(db, [app.id], from),
    productionVersionsOf(db, [app.id]),
  ]);
  const series = dates.map((date) => ({ date, ...(byDay.get(date) ?? empty) }));
  const all = sum(series);
  const revenue = all.revenueCents / 100;
  const productionVersion = production.get(app.id) ?? null;
  return {
    total_invocations: all.invocations,
    total_revenue: revenue,
    figures: moneyFigures(days, all),
    production_version: productionVersion,
    by_version: byVersion(all, versions.get(app.id), productionVersion),
    summary: {
      total_invocations: all.invocations,
      total_users: users,
      total_revenue: revenue,
      series: series.map((d) => ({
        date: d.date,
        invocations: d.invocations,
        revenue: d.revenueCents / 100,
      })),
    },
  };
}

export async function getAppPerformance(
  db: Database,
  app: ApplicationRow,
  days: number,
): Promise<AppPerformance> {
  const dates = windowDays(days);
  const byDay = await dailyTotals(db, [app.id], dates[0] as string);
  const series = dates.map((date) => ({ date, ...(byDay.get(date) ?? empty) }));
  const all = sum(series);
  return {
    performance: {
      success_rate: percent(all.successes, all.invocations),
      average_response_time: seconds(all.latencyMs, all.invocations),
      series: series.map((d) => ({
        date: d.date,
        success_count: d.successes,
        error_count: d.errors,
        response_time: seconds(d.latencyMs, d.invocations),
      })),
    },
  };
}

/**
 * Days looked back, in turn, for an app's latest calls: invocations are partitioned by day
 * (decision 038), so a bounded look reads one or a few days' indexes, not one per day kept.
 * An app with fewer calls than asked for in the last week is looked up over all the days kept.
 */
const RECENT_WINDOWS_DAYS = [1, 7, undefined];

/** The latest customer calls (an index range read per day looked at, newest first). */
export async function getRecentInvocations(
  db: Database,
  app: ApplicationRow,
  limit: number,
): Promise<RecentInvocations> {
  let rows: (typeof invocations.$inferSelect)[] = [];
  for (const days of RECENT_WINDOWS_DAYS) {
    rows = await db
      .select()
      .from(invocations)
      .where(
        and(
          eq(invocations.applicationId, app.id),
          // No eval traffic (docs/decisions/078): eval runs and online-eval judges are not traffic.
          notInArray(invocations.purpose, ["eval", "online_eval"]),
          // A bound time, not now(): the planner then leaves out the other days' partitions
          // before planning them (with now() it plans every partition, pruning only at run time).
          days === undefined ? undefined : gte(invocations.createdAt, new Date(Date.now() - days * DAY_MS)),
        ),
      )
      .orderBy(desc(invocations.createdAt))
      .limit(limit);
    if (rows.length >= limit) break;
  }
  return {
    recent_invocations: rows.map((row) => ({
      id: row.id,
      end_user: row.endUser,
      status: row.status,
      response_time: row.latencyMs / 1000,
      input_tokens: row.inputTokens,
      output_tokens: row.outputTokens,
      version: row.appVersion,
      content_kept: row.status === "success" && row.conversationId !== null,
      created_at: row.createdAt.toISOString(),
    })),
  };
}

/** "Last 30 days": the window the figures cover (UTC days, today included). */
export const periodLabel = (days: number) => (days === 1 ? "Today" : `Last ${days} days`);

/**
 * The one set of money figures (decision 029), from the rollups' columns: gross (`revenue_cents`,
 * the successful calls' charges), the platform's fee (`fee_micros`), the model cost
 * (`model_cost_micros`), and net = gross − fee − model cost.
 */
export function moneyFigures(
  days: number,
  totals: Pick<DayTotals, "revenueCents" | "feeMicros" | "modelCostMicros">,
): MoneyFigures {
  const gross = totals.revenueCents * MICROS_PER_CENT;
  return {
    period_days: days,
    period: periodLabel(days),
    gross_micros: gross,
    fee_micros: totals.feeMicros,
    model_cost_micros: totals.modelCostMicros,
    net_micros: gross - totals.feeMicros - totals.modelCostMicros,
  };
}

/**
 * The creator's figures over the window: the sum of their apps' (the apps the dashboard lists,
 * so its total is the sum of its rows), from the same rollups as each app's.
 */
export async function getOwnerFigures(db: Database, ownerId: string, days: number): Promise<MoneyFigures> {
  const from = windowDays(days)[0] as string;
  const [row] = await db
    .select({
      revenueCents: totals.revenueCents,
      feeMicros: totals.feeMicros,
      modelCostMicros: totals.modelCostMicros,
    })
    .from(appDailyStats)
    .innerJoin(applications, eq(applications.id, appDailyStats.applicationId))
    .where(
      and(eq(applications.ownerId, ownerId), isNull(applications.archivedAt), gte(appDailyStats.day, from)),
    );
  return moneyFigures(days, {
    revenueCents: Number(row?.revenueCents ?? 0),
    feeMicros: Number(row?.feeMicros ?? 0),
    modelCostMicros: Number(row?.modelCostMicros ?? 0),
  });
}

/**
 * The creator's statement for the window broken down by app and version (issue 31 part 4): the
 * totals are exactly getOwnerFigures' (the same apps, the same rollups), and each app's versions
 * add up to its own figures. Reads the rollups only: flat however many calls there were.
 */
export async function getOwnerVersionFigures(
  db: Database,
  ownerId: string,
  days: number,
): Promise<OwnerVersionFigures> {
  const from = windowDays(days)[0] as string;
  const apps = await db
    .select({
      id: applications.id,
      name: applications.name,
      slug: applications.slug,
      type: applications.type,
    })
    .from(applications)
    .where(and(eq(applications.ownerId, ownerId), isNull(applications.archivedAt)));
  const appIds = apps.map((a) => a.id);
  const [perApp, versions, production] = await Promise.all([
    appIds.length
      ? db
          .select({ applicationId: appDailyStats.applicationId, ...totals })
          .from(appDailyStats)
          .where(and(inArray(appDailyStats.applicationId, appIds), gte(appDailyStats.day, from)))
          .groupBy(appDailyStats.applicationId)
      : Promise.resolve([]),
    versionTotalsOf(db, appIds, from),
    productionVersionsOf(db, appIds),
  ]);
  const appTotals = new Map(perApp.map(({ applicationId, ...rest }) => [applicationId, numeric(rest)]));
  const all = sum([...appTotals.values()]);
  return {
    figures: moneyFigures(days, all),
    applications: apps
      .filter((app) => appTotals.has(app.id))
      .map((app) => ({
        application_name: app.name,
        application_slug: app.slug,
        application_type: app.type,
        production_version: production.get(app.id) ?? null,
        versions: byVersion(
          appTotals.get(app.id) ?? empty,
          versions.get(app.id),
          production.get(app.id) ?? null,
        ),
      }))
      .sort(
        (a, b) =>
          sumOf(b.versions, "gross_micros") - sumOf(a.versions, "gross_micros") ||
          a.application_name.localeCompare(b.application_name),
      ),
  };
}

const sumOf = (rows: VersionFigures[], key: "gross_micros") => rows.reduce((acc, row) => acc + row[key], 0);
