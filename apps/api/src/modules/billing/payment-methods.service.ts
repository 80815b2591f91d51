import type { CreatePaymentMethodSchema, PaymentMethod } from "@promptmint/contracts";
import { and, desc, eq, isNull, ne } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { paymentMethods } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { checkTestCard } from "./sandbox-gateway.ts";

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

/** Sandbox: the card is checked like Stripe test mode, and only brand, last 4 and expiry are kept. */
export async function addPaymentMethod(
  db: Database,
  userId: string,
  input: z.output<typeof CreatePaymentMethodSchema>,
): Promise<PaymentMethod> {
  if (!input.card) throw invalidFields({ card: "is required" });
  const number = input.card.number.replace(/\s+/g, "");
  const problem = checkTestCard(number, input.card.exp_month, input.card.exp_year);
  if (problem) throw new AppError("bad_request", problem.message, { fields: { card: problem.message } });
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const existing = await listPaymentMethods(t, userId);
    const isDefault = input.set_default || existing.length === 0;
    if (isDefault)
      await t.update(paymentMethods).set({ isDefault: false }).where(eq(paymentMethods.userId, userId));
    const [row] = await t
      .insert(paymentMethods)
      .values({
        userId,
        gateway: "sandbox",
        brand: cardBrand(number),
        last4: number.slice(-4),
        expMonth: input.card?.exp_month ?? 1,
        expYear: input.card?.exp_year ?? 2000,
        billingAddress: input.billing_address,
        isDefault,
      })
      .returning();
    return toPaymentMethod(row as Row);
  });
}

async function findOwn(db: Database, userId: string, id: string): Promise<Row> {
  const [row] = /^[0-9a-f-]{36}$/i.test(id)
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
  const row = await findOwn(db, userId, id);
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
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
