import type { CreatePackageSchema, Package, UpdatePackageSchema } from "@promptmint/contracts";
import { and, asc, eq, inArray, isNotNull } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, type PackageRow, packages, subscriptions } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { effectivePriceSql, priceFields, setPrice } from "./price-changes.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import { setCancelOnStripe } from "./stripe-subscriptions.ts";

export const PERIOD_DAYS = 30;

export function toPackage(row: PackageRow): Package {
  const prices = priceFields(row);
  return {
    id: row.id,
    name: row.name,
    price: prices.price_cents / 100,
    ...prices,
    currency: row.currency,
    description: row.description,
    features: row.features as Record<string, string>,
    included_calls: row.includedCalls,
    is_active: row.isActive,
  };
}

export async function listPackages(db: Database, app: ApplicationRow): Promise<Package[]> {
  const rows = await db
    .select()
    .from(packages)
    .where(eq(packages.applicationId, app.id))
    .orderBy(asc(effectivePriceSql(packages)), asc(packages.createdAt));
  return rows.map(toPackage);
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
  return toPackage(row);
}

export async function findPackage(db: Database, app: ApplicationRow, id: string): Promise<PackageRow> {
  const [row] = /^[0-9a-f-]{36}$/i.test(id)
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
 * A plan's price may change; current periods keep what they paid for. A raised price is announced
 * and charged only for periods starting `priceNoticeMs` later (billing/price-changes.ts).
 */
export async function updatePackage(
  db: Database,
  app: ApplicationRow,
  id: string,
  input: z.output<typeof UpdatePackageSchema>,
  { priceNoticeMs }: { priceNoticeMs: number },
): Promise<Package> {
  const plan = await findPackage(db, app, id);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.price_cents !== undefined
      ? setPrice(plan, input.price_cents, { now: new Date(), noticeMs: priceNoticeMs })
      : {}),
    ...(input.currency !== undefined ? { currency: input.currency } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.features !== undefined ? { features: input.features } : {}),
    ...(input.included_calls !== undefined ? { includedCalls: input.included_calls } : {}),
    ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
  };
  const [row] = Object.keys(changes).length
    ? await db.update(packages).set(changes).where(eq(packages.id, id)).returning()
    : await db.select().from(packages).where(eq(packages.id, id));
  if (!row) throw notFound("Plan");
  return toPackage(row);
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
