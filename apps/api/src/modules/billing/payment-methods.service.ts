import { createHash } from "node:crypto";
import { type CreatePaymentMethodSchema, isUuid, type PaymentMethod } from "@promptmint/contracts";
import { and, desc, eq, isNull, ne } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { lockUserRow } from "../../db/row-locks.ts";
import { paymentMethods } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { checkTestCard } from "./sandbox-gateway.ts";
import type { StripeGateway } from "./stripe-gateway.ts";

type Row = typeof paymentMethods.$inferSelect;

const toPaymentMethod = (row: Row): PaymentMethod => ({
  id: row.id,
  card_brand: row.brand,
  card_last4: row.last4,
  card_exp_month: row.expMonth,
  card_exp_year: row.expYear,
  is_default: row.isDefault,
});

export function cardBrand(number: string): string {
  if (/^4/.test(number)) return "visa";
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return "mastercard";
  if (/^3[47]/.test(number)) return "amex";
  if (/^(6011|65|64[4-9])/.test(number)) return "discover";
  return "unknown";
}

export async function listPaymentMethods(db: Database, userId: string): Promise<PaymentMethod[]> {
  const rows = await db
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.userId, userId), isNull(paymentMethods.deletedAt)))
    .orderBy(desc(paymentMethods.isDefault), desc(paymentMethods.createdAt));
  return rows.map(toPaymentMethod);
}

/**
 * Sandbox: the card is checked like Stripe test mode. Stripe: the PaymentMethod the browser set up
 * is fetched and must belong to the user's customer. Either way only brand, last 4 and expiry are kept.
 */
export async function addPaymentMethod(
  db: Database,
  user: LocalUser,
  input: z.output<typeof CreatePaymentMethodSchema>,
  stripe: StripeGateway | undefined,
): Promise<PaymentMethod> {
  let card: {
    brand: string;
    last4: string;
    expMonth: number;
    expYear: number;
    externalId: string | null;
    fingerprint: string | null;
  };
  if (stripe) {
    if (!input.stripe_payment_method_id)
      throw invalidFields({ stripe_payment_method_id: "is required when payments go through Stripe" });
    card = {
      ...(await stripe.retrieveCard(db, user, input.stripe_payment_method_id)),
      externalId: input.stripe_payment_method_id,
    };
  } else {
    if (!input.card) throw invalidFields({ card: "is required" });
    const number = input.card.number.replace(/\s+/g, "");
    const problem = checkTestCard(number, input.card.exp_month, input.card.exp_year);
    if (problem) throw new AppError("bad_request", problem.message, { fields: { card: problem.message } });
    card = {
      brand: cardBrand(number),
      last4: number.slice(-4),
      expMonth: input.card.exp_month,
      expYear: input.card.exp_year,
      externalId: null,
      fingerprint: sandboxFingerprint(number),
    };
  }
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    // One default card: concurrent adds (and default changes) of one user take turns.
    await lockUserRow(t, user.id);
    const existing = await listPaymentMethods(t, user.id);
    const isDefault = input.set_default || existing.length === 0;
    if (isDefault)
      await t.update(paymentMethods).set({ isDefault: false }).where(eq(paymentMethods.userId, user.id));
    const [row] = await t
      .insert(paymentMethods)
      .values({
        userId: user.id,
        gateway: stripe ? "stripe" : "sandbox",
        externalId: card.externalId,
        brand: card.brand,
        last4: card.last4,
        expMonth: card.expMonth,
        expYear: card.expYear,
        billingAddress: input.billing_address,
        fingerprint: card.fingerprint,
        isDefault,
      })
      .returning();
    return toPaymentMethod(row as Row);
  });
}

/**
 * A sandbox card's fingerprint, as Stripe gives one: the same number is the same card whichever
 * account saves it (a free trial is refused to a card that took it, decision 080).
 */
export function sandboxFingerprint(number: string): string {
  return createHash("sha256").update(`sandbox-card:${number}`).digest("hex").slice(0, 32);
}

async function findOwn(db: Database, userId: string, id: string): Promise<Row> {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(paymentMethods)
        .where(
          and(eq(paymentMethods.id, id), eq(paymentMethods.userId, userId), isNull(paymentMethods.deletedAt)),
        )
        .limit(1)
    : [];
  if (!row) throw notFound("Payment method");
  return row;
}

export async function makeDefault(db: Database, userId: string, id: string): Promise<PaymentMethod> {
  await findOwn(db, userId, id);
  await db.transaction(async (tx) => {
    await lockUserRow(tx as unknown as Database, userId);
    await tx
      .update(paymentMethods)
      .set({ isDefault: false })
      .where(and(eq(paymentMethods.userId, userId), ne(paymentMethods.id, id)));
    await tx.update(paymentMethods).set({ isDefault: true }).where(eq(paymentMethods.id, id));
  });
  return toPaymentMethod(await findOwn(db, userId, id));
}

/** Removing the default card makes the newest remaining card the default. */
export async function removePaymentMethod(db: Database, userId: string, id: string): Promise<void> {
  await findOwn(db, userId, id);
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockUserRow(t, userId);
    const row = await findOwn(t, userId, id);
    await t
      .update(paymentMethods)
      .set({ deletedAt: new Date(), isDefault: false })
      .where(eq(paymentMethods.id, id));
    if (row.isDefault) {
      const [next] = await t
        .select({ id: paymentMethods.id })
        .from(paymentMethods)
        .where(and(eq(paymentMethods.userId, userId), isNull(paymentMethods.deletedAt)))
        .orderBy(desc(paymentMethods.createdAt))
        .limit(1);
      if (next) await t.update(paymentMethods).set({ isDefault: true }).where(eq(paymentMethods.id, next.id));
    }
  });
}
