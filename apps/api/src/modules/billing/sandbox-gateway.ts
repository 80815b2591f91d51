import { createHash, randomBytes } from "node:crypto";
import type { PaymentIntent, PaymentResult } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { payments } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { walletBalance } from "./balances.ts";
import { creditPaymentToWallet } from "./plan-payments.ts";

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

/** What Stripe test mode would answer for this card, or undefined when it would succeed. */
export function checkTestCard(
  number: string,
  expMonth: number,
  expYear: number,
): { status: "failed" | "requires_action"; message: string } | undefined {
  const now = new Date();
  const expired =
    expYear < now.getUTCFullYear() || (expYear === now.getUTCFullYear() && expMonth < now.getUTCMonth() + 1);
  if (!luhnValid(number)) return { status: "failed", message: "Your card number is invalid." };
  if (expired) return { status: "failed", message: "Your card has expired." };
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

export async function confirmSandboxPayment(
  db: Database,
  userId: string,
  input: {
    client_secret: string;
    card: { number: string; exp_month: number; exp_year: number; cvc: string };
  },
): Promise<PaymentResult> {
  const id = input.client_secret.split("_secret_")[0] ?? "";
  const [payment] = await db
    .select()
    .from(payments)
    .where(and(eq(payments.gateway, "sandbox"), eq(payments.externalId, id), eq(payments.userId, userId)))
    .limit(1);
  const metadata = payment?.metadata as { secret_sha256?: string } | undefined;
  if (!payment || metadata?.secret_sha256 !== hashSecret(input.client_secret))
    throw new AppError("not_found", "Payment not found");
  const balance = () => walletBalance(db, userId);
  if (payment.status === "succeeded")
    return {
      status: "succeeded",
      message: "Payment already completed",
      amount: payment.amountCents,
      balance_micros: await balance(),
    };

  const number = input.card.number.replace(/\s+/g, "");
  const now = new Date();
  const expired =
    input.card.exp_year < now.getUTCFullYear() ||
    (input.card.exp_year === now.getUTCFullYear() && input.card.exp_month < now.getUTCMonth() + 1);
  let outcome: { status: PaymentResult["status"]; message: string };
  if (!luhnValid(number)) outcome = { status: "failed", message: "Your card number is invalid." };
  else if (expired) outcome = { status: "failed", message: "Your card has expired." };
  else if (number === "4000000000000002") outcome = { status: "failed", message: "Your card was declined." };
  else if (number === "4000002500003155")
    outcome = { status: "requires_action", message: "Payment was not completed successfully" };
  else outcome = { status: "succeeded", message: "Payment succeeded" };

  if (outcome.status !== "succeeded") {
    await db
      .update(payments)
      .set({ status: outcome.status === "failed" ? "failed" : "requires_action" })
      .where(eq(payments.id, payment.id));
    return { ...outcome, amount: payment.amountCents, balance_micros: await balance() };
  }
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [marked] = await t
      .update(payments)
      .set({ status: "succeeded" })
      .where(and(eq(payments.id, payment.id), eq(payments.status, payment.status)))
      .returning({ id: payments.id });
    // Only top-ups go to the wallet; a plan's payment is used by the subscription it was made for.
    if (!marked || payment.purpose !== "top_up") return;
    await creditPaymentToWallet(t, payment, `Wallet top-up (card •••• ${number.slice(-4)})`);
  });
  return { ...outcome, amount: payment.amountCents, balance_micros: await balance() };
}
