import {
  type CreatePackageSchema,
  isUuid,
  type Package,
  type UpdatePackageSchema,
} from "@promptmint/contracts";
import { and, asc, eq, inArray, isNotNull } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, type PackageRow, packages, subscriptions } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import {
  effectiveFromFor,
  insertTerms,
  latestTerms,
  loadPlanTerms,
  type PlanTerms,
  pendingTerms,
  termsFields,
  termsInForce,
  termsOfPlan,
} from "./plan-terms.ts";
import { effectivePriceSql } from "./price-changes.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import { setCancelOnStripe } from "./stripe-subscriptions.ts";

/** A plan as the contracts show it, from its row and its terms (the versions in force and announced at `now`). */
export function toPackage(row: PackageRow, versions: PlanTerms[], now = new Date()): Package {
  const inForce = termsInForce(versions, now);
  const pending = pendingTerms(versions, now);
  const raised = pending && pending.priceCents > inForce.priceCents ? pending : undefined;
  return {
    id: row.id,
    name: row.name,
    price: inForce.priceCents / 100,
    price_cents: inForce.priceCents,
    pending_price_cents: raised?.priceCents ?? null,
    pending_price_at: raised?.effectiveFrom.toISOString() ?? null,
    currency: row.currency,
    description: row.description,
    features: row.features as Record<string, string>,
    included_calls: inForce.includedCalls,
    period_days: inForce.periodDays,
    terms_version: inForce.version,
    terms_effective_from: inForce.effectiveFrom.toISOString(),
    pending_terms: pending ? termsFields(pending) : null,
    is_active: row.isActive,
  };
}

export async function listPackages(db: Database, app: ApplicationRow): Promise<Package[]> {
  const rows = await db
    .select()
    .from(packages)
    .where(eq(packages.applicationId, app.id))
    .orderBy(asc(effectivePriceSql(packages)), asc(packages.createdAt));
  const terms = await loadPlanTerms(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toPackage(row, terms.get(row.id) ?? []));
}

export async function createPackage(
  db: Database,
  app: ApplicationRow,
  input: z.output<typeof CreatePackageSchema>,
): Promise<Package> {
  const [row] = await db
    .insert(packages)
    .values({
      applicationId: app.id,
      name: input.name,
      priceCents: input.price_cents,
      currency: input.currency,
      description: input.description,
      features: input.features,
      includedCalls: input.included_calls,
      isActive: input.is_active,
    })
    .returning();
  if (!row) throw new Error("package insert returned nothing");
  // Version 1 of its terms is written by the database with the row (migration 0033).
  return toPackage(row, await termsOfPlan(db, row.id));
}

export async function findPackage(db: Database, app: ApplicationRow, id: string): Promise<PackageRow> {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(packages)
        .where(and(eq(packages.id, id), eq(packages.applicationId, app.id)))
        .limit(1)
    : [];
  if (!row) throw notFound("Plan");
  return row;
}

/**
 * A plan's terms (price, included calls) change by a new version (plan-terms.ts): one that gives
 * subscribers less takes effect `priceNoticeMs` after it was saved, one at least as good at once;
 * current periods keep the terms they started under. The plan's row is locked, so concurrent
 * edits write consecutive versions. Its price columns are kept as a copy for sorting and the
 * cost guard; money is charged by the versions alone.
 */
export async function updatePackage(
  db: Database,
  app: ApplicationRow,
  id: string,
  input: z.output<typeof UpdatePackageSchema>,
  { priceNoticeMs }: { priceNoticeMs: number },
): Promise<Package> {
  await findPackage(db, app, id);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [plan] = await t.select().from(packages).where(eq(packages.id, id)).for("update");
    if (!plan) throw notFound("Plan");
    const now = new Date();
    let versions = await termsOfPlan(t, id);
    const latest = latestTerms(versions);
    const next = {
      priceCents: input.price_cents ?? latest.priceCents,
      includedCalls: input.included_calls ?? latest.includedCalls,
      periodDays: latest.periodDays,
    };
    const effectiveFrom = effectiveFromFor(versions, next, { now, noticeMs: priceNoticeMs });
    if (effectiveFrom) {
      const added = await insertTerms(t, id, {
        ...next,
        version: latest.version + 1,
        effectiveFrom,
        createdAt: now,
      });
      versions = [...versions, added];
    }
    const inForce = termsInForce(versions, now);
    const pending = pendingTerms(versions, now);
    const raised = pending && pending.priceCents > inForce.priceCents ? pending : undefined;
    const changes = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.currency !== undefined ? { currency: input.currency } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.features !== undefined ? { features: input.features } : {}),
      ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
      priceCents: inForce.priceCents,
      pendingPriceCents: raised?.priceCents ?? null,
      pendingPriceAt: raised?.effectiveFrom ?? null,
      includedCalls: latestTerms(versions).includedCalls,
    };
    const [row] = await t.update(packages).set(changes).where(eq(packages.id, id)).returning();
    if (!row) throw notFound("Plan");
    return toPackage(row, versions, now);
  });
}

/**
 * Plans with subscribers are never deleted, only withdrawn from sale. Their subscriptions end at
 * period end: wallet ones at our renewal, card ones because Stripe is told to cancel them then.
 */
export async function deactivatePackage(
  db: Database,
  app: ApplicationRow,
  id: string,
  stripe: StripeGateway | undefined,
): Promise<void> {
  await findPackage(db, app, id);
  await db.update(packages).set({ isActive: false }).where(eq(packages.id, id));
  const billedByStripe = await db
    .select({ id: subscriptions.id, stripeSubscriptionId: subscriptions.stripeSubscriptionId })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.packageId, id),
        inArray(subscriptions.status, ["active", "past_due", "incomplete"]),
        eq(subscriptions.cancelAtPeriodEnd, false),
        isNotNull(subscriptions.stripeSubscriptionId),
      ),
    );
  for (const row of billedByStripe) await setCancelOnStripe(db, stripe, row, true);
}
