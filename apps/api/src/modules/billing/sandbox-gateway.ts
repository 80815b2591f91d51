import { createHash, randomBytes } from "node:crypto";
import { type DeviceWallet, isUuid, type PaymentIntent, type PaymentResult } from "@promptmint/contracts";
import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { paymentMethods, payments } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { walletBalance } from "./balances.ts";
import { creditPaymentToWallet } from "./plan-payments.ts";
import { payTopUpBonuses } from "./sponsored/promotion-codes.ts";

/**
 * The offline payment processor, behaving like Stripe test mode: 4242… succeeds,
 * 4000 0000 0000 0002 is declined, 4000 0025 0000 3155 needs authentication that never completes.
 * Refused when NODE_ENV=production.
 */
const hashSecret = (secret: string) => createHash("sha256").update(secret).digest("hex");

function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

type CardRefusal = { status: "failed" | "requires_action"; message: string };

function cardExpired(expMonth: number, expYear: number): CardRefusal | undefined {
  const now = new Date();
  const expired =
    expYear < now.getUTCFullYear() || (expYear === now.getUTCFullYear() && expMonth < now.getUTCMonth() + 1);
  return expired ? { status: "failed", message: "Your card has expired." } : undefined;
}

/** What Stripe test mode would answer for this card, or undefined when it would succeed. */
export function checkTestCard(number: string, expMonth: number, expYear: number): CardRefusal | undefined {
  if (!luhnValid(number)) return { status: "failed", message: "Your card number is invalid." };
  const expired = cardExpired(expMonth, expYear);
  if (expired) return expired;
  if (number === "4000000000000002") return { status: "failed", message: "Your card was declined." };
  if (number === "4000002500003155")
    return { status: "requires_action", message: "Payment was not completed successfully" };
  return undefined;
}

export async function createSandboxPaymentIntent(
  db: Database,
  userId: string,
  amount: number,
  currency: string,
  packageId?: string,
): Promise<PaymentIntent> {
  const id = `pi_sbx_${randomBytes(12).toString("hex")}`;
  const clientSecret = `${id}_secret_${randomBytes(16).toString("hex")}`;
  await db.insert(payments).values({
    userId,
    gateway: "sandbox",
    externalId: id,
    amountCents: amount,
    currency,
    status: "requires_payment_method",
    purpose: packageId ? "subscription" : amount === 0 ? "setup" : "top_up",
    packageId: packageId ?? null,
    metadata: { secret_sha256: hashSecret(clientSecret) },
  });
  return { id, client_secret: clientSecret, amount, currency, gateway: "sandbox" };
}

/**
 * Confirms a sandbox payment with a test card. A payment succeeds at most once and is credited at
 * most once: its row is locked for the whole decision, so confirmations of one payment (a good card
 * and a declined one sent at once, a double click) run one after the other. Until it succeeds, each
 * answers its card's outcome (a declined card is an answer, not an error: the SPA shows it); once it
 * has succeeded, every later confirmation is refused with 409 and changes nothing (Stripe answers
 * `payment_intent_unexpected_state`). Decision 046.
 */
export async function confirmSandboxPayment(
  db: Database,
  userId: string,
  input: {
    client_secret: string;
    card?: { number: string; exp_month: number; exp_year: number; cvc: string };
    payment_method_id?: string;
    wallet?: DeviceWallet;
  },
): Promise<PaymentResult> {
  const id = input.client_secret.split("_secret_")[0] ?? "";
  const card = await cardToCharge(db, userId, input);
  const decided = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [payment] = await t
      .select()
      .from(payments)
      .where(and(eq(payments.gateway, "sandbox"), eq(payments.externalId, id), eq(payments.userId, userId)))
      .limit(1)
      .for("update");
    const metadata = payment?.metadata as { secret_sha256?: string } | undefined;
    if (!payment || metadata?.secret_sha256 !== hashSecret(input.client_secret))
      throw new AppError("not_found", "Payment not found");
    if (payment.status === "succeeded")
      throw new AppError(
        "conflict",
        "This payment has already succeeded: it cannot be confirmed again, and nothing more was charged",
      );
    const refused = card.refused;
    if (refused) {
      await t
        .update(payments)
        .set({ status: refused.status === "failed" ? "failed" : "requires_action" })
        .where(eq(payments.id, payment.id));
      return { outcome: refused, amount: payment.amountCents };
    }
    await t.update(payments).set({ status: "succeeded" }).where(eq(payments.id, payment.id));
    // Only top-ups go to the wallet; a plan's payment is used by the subscription it was made for.
    if (
      payment.purpose === "top_up" &&
      (await creditPaymentToWallet(t, payment, `Wallet top-up (${card.label})`))
    )
      // Percent promotion codes waiting for this top-up pay their bonus credit (decision 080).
      await payTopUpBonuses(t, payment.userId, payment.amountCents);
    return {
      outcome: { status: "succeeded" as const, message: "Payment succeeded" },
      amount: payment.amountCents,
    };
  });
  return { ...decided.outcome, amount: decided.amount, balance_micros: await walletBalance(db, userId) };
}

/** How a payment method reads on the ledger and receipts: `card •••• 4242`, `Apple Pay`. */
const WALLET_NAMES: Record<DeviceWallet, string> = { apple_pay: "Apple Pay", google_pay: "Google Pay" };

/**
 * The card a sandbox payment is confirmed with: one typed in (judged like Stripe test mode), one
 * the caller saved earlier (it passed that check when it was saved; only its expiry can fail it
 * now), or a device wallet (Apple Pay, Google Pay: as in Stripe's test mode, the wallet holds a
 * test card that succeeds). Exactly one of them; a saved card must be the caller's own (404 otherwise).
 */
async function cardToCharge(
  db: Database,
  userId: string,
  input: {
    card?: { number: string; exp_month: number; exp_year: number; cvc: string };
    payment_method_id?: string;
    wallet?: DeviceWallet;
  },
): Promise<{ label: string; refused: ReturnType<typeof checkTestCard> }> {
  const given = [
    input.card && "card",
    input.payment_method_id !== undefined && "payment_method_id",
    input.wallet && "wallet",
  ].filter(Boolean);
  if (given.length > 1) {
    const [first, ...rest] = given as string[];
    throw invalidFields(Object.fromEntries(rest.map((name) => [name, `cannot be combined with ${first}`])));
  }
  if (input.wallet) return { label: WALLET_NAMES[input.wallet], refused: undefined };
  if (input.payment_method_id !== undefined) {
    const [saved] = isUuid(input.payment_method_id)
      ? await db
          .select()
          .from(paymentMethods)
          .where(
            and(
              eq(paymentMethods.id, input.payment_method_id),
              eq(paymentMethods.userId, userId),
              eq(paymentMethods.gateway, "sandbox"),
              isNull(paymentMethods.deletedAt),
            ),
          )
          .limit(1)
      : [];
    if (!saved) throw notFound("Payment method");
    return { label: `card •••• ${saved.last4}`, refused: cardExpired(saved.expMonth, saved.expYear) };
  }
  if (!input.card)
    throw invalidFields({
      card: "is required (or payment_method_id for a saved card, or wallet: apple_pay or google_pay)",
    });
  const number = input.card.number.replace(/\s+/g, "");
  return {
    label: `card •••• ${number.slice(-4)}`,
    refused: checkTestCard(number, input.card.exp_month, input.card.exp_year),
  };
}
