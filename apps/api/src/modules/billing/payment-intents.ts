import { isUuid, MIN_TOP_UP_CENTS } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { packages } from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";
import { termsInForce, termsOfPlan } from "./plan-terms.ts";

/**
 * Refuses (400) a payment that is not what it claims to pay for: a plan payment must name an
 * active plan (of `appId`, when the payment is made from an app's page) and equal the price its
 * terms now in force set; a top-up must be at least MIN_TOP_UP_CENTS (0 sets up a card).
 */
export async function refuseWrongPaymentAmount(
  db: Database,
  payment: { amount: number; packageId: string | undefined; appId: string | undefined },
): Promise<void> {
  if (payment.packageId !== undefined) {
    const [plan] = isUuid(payment.packageId)
      ? await db.select().from(packages).where(eq(packages.id, payment.packageId)).limit(1)
      : [];
    if (!plan || (payment.appId && plan.applicationId !== payment.appId) || !plan.isActive) {
      throw invalidFields({ package_id: "is not an available plan of this app" });
    }
    const { priceCents } = termsInForce(await termsOfPlan(db, plan.id), new Date());
    if (priceCents !== payment.amount)
      throw invalidFields({ amount: `must equal the plan's price, ${priceCents} cents` });
  } else if (payment.amount !== 0 && payment.amount < MIN_TOP_UP_CENTS) {
    throw invalidFields({ amount: `must be at least ${MIN_TOP_UP_CENTS} cents ($1.00)` });
  }
}
