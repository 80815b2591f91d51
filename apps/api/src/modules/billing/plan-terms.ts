import { asc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type PlanTermsRow, planTerms } from "../../db/schema/index.ts";

/**
 * A plan's terms are immutable versions (docs/decisions/044).
 *
 * Invariant: a subscriber never gets less for their money than terms they could see. A change
 * that is not at least as good for every subscriber (a higher price, fewer included calls, another
 * period) takes effect the notice period after it was saved, like a price increase (decision 021);
 * a change at least as good in every respect takes effect at once. Each period is sold, charged
 * and counted under the terms in force when it starts: a pure function of the rows and that
 * moment, so every process, however late it renews, computes the same terms for the same period.
 */
export type PlanTerms = Pick<
  PlanTermsRow,
  "id" | "version" | "priceCents" | "includedCalls" | "periodDays" | "effectiveFrom" | "createdAt"
>;

/** What a creator sets. */
export type TermsValues = Pick<PlanTerms, "priceCents" | "includedCalls" | "periodDays">;

/** The period of every plan today: it is stored per version, not yet editable. */
export const PERIOD_DAYS = 30;

/** True when `next` gives every subscriber at least what `current` does: no higher price, no fewer calls, the same period. */
export function atLeastAsGood(next: TermsValues, current: TermsValues): boolean {
  return (
    next.priceCents <= current.priceCents &&
    next.includedCalls >= current.includedCalls &&
    next.periodDays === current.periodDays
  );
}

const sameTerms = (a: TermsValues, b: TermsValues) =>
  a.priceCents === b.priceCents && a.includedCalls === b.includedCalls && a.periodDays === b.periodDays;

/** A version no longer counts once a later one was saved before it took effect (it was replaced). */
function withdrawn(version: PlanTerms, versions: readonly PlanTerms[]): boolean {
  return versions.some(
    (later) => later.version > version.version && later.createdAt.getTime() < version.effectiveFrom.getTime(),
  );
}

/** The terms a period starting at `at` is sold, charged and counted under. */
export function termsInForce(versions: readonly PlanTerms[], at: Date | number): PlanTerms {
  let found: PlanTerms | undefined;
  for (const version of versions) {
    if (version.effectiveFrom.getTime() > +at || withdrawn(version, versions)) continue;
    if (!found || version.version > found.version) found = version;
  }
  // Version 1 takes effect when the plan is created; nothing can be sold before it.
  const first = found ?? versions.reduce((a, b) => (a.version < b.version ? a : b));
  if (!first) throw new Error("a plan without terms");
  return first;
}

/** The announced change still to come at `at`, if any (only the newest version can be one). */
export function pendingTerms(versions: readonly PlanTerms[], at: Date | number): PlanTerms | undefined {
  const newest = latestTerms(versions);
  return newest.effectiveFrom.getTime() > +at ? newest : undefined;
}

/** The terms the creator has set: the newest version. What editors show. */
export function latestTerms(versions: readonly PlanTerms[]): PlanTerms {
  const newest = versions.reduce<PlanTerms | undefined>(
    (a, b) => (a && a.version > b.version ? a : b),
    undefined,
  );
  if (!newest) throw new Error("a plan without terms");
  return newest;
}

/**
 * When terms the creator saves at `now` take effect, or undefined when they are the terms already
 * set (an editor saving other fields changes nothing):
 * - at least as good as the terms in force: at once (withdrawing any announced change);
 * - at least as good as an announced change: that change's moment (subscribers were told of worse);
 * - otherwise: `now + noticeMs`.
 */
export function effectiveFromFor(
  versions: readonly PlanTerms[],
  next: TermsValues,
  { now, noticeMs }: { now: Date; noticeMs: number },
): Date | undefined {
  if (sameTerms(next, latestTerms(versions))) return undefined;
  if (atLeastAsGood(next, termsInForce(versions, now))) return now;
  const pending = pendingTerms(versions, now);
  if (pending && atLeastAsGood(next, pending)) return pending.effectiveFrom;
  return new Date(now.getTime() + noticeMs);
}

/** Every version of each plan, oldest first. */
export async function loadPlanTerms(db: Database, packageIds: string[]): Promise<Map<string, PlanTerms[]>> {
  const byPlan = new Map<string, PlanTerms[]>(packageIds.map((id) => [id, []]));
  if (packageIds.length === 0) return byPlan;
  const rows = await db
    .select()
    .from(planTerms)
    .where(inArray(planTerms.packageId, packageIds))
    .orderBy(asc(planTerms.version));
  for (const row of rows) byPlan.get(row.packageId)?.push(row);
  return byPlan;
}

export async function termsOfPlan(db: Database, packageId: string): Promise<PlanTerms[]> {
  return db
    .select()
    .from(planTerms)
    .where(eq(planTerms.packageId, packageId))
    .orderBy(asc(planTerms.version));
}

/** Appends a version (inside the caller's transaction, with the plan's row locked). */
export async function insertTerms(
  db: Database,
  packageId: string,
  values: TermsValues & { version: number; effectiveFrom: Date; createdAt: Date },
): Promise<PlanTerms> {
  const [row] = await db
    .insert(planTerms)
    .values({ packageId, ...values })
    .returning();
  if (!row) throw new Error("plan terms insert returned nothing");
  return row;
}

/** The subscriber-facing description of a version, for the contracts. */
export function termsFields(terms: PlanTerms) {
  return {
    version: terms.version,
    price_cents: terms.priceCents,
    included_calls: terms.includedCalls,
    period_days: terms.periodDays,
    effective_from: terms.effectiveFrom.toISOString(),
  };
}
