import { and, eq, inArray, isNotNull, isNull, like, or, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { type Database, queryRows } from "../../../db/client.ts";
import { agentRefunds, users } from "../../../db/schema/index.ts";
import { AppError } from "../../../lib/errors.ts";
import { recallHolds } from "../call-payment/holds.ts";
import { accountFor, postTransaction } from "../postings.ts";
import type {
  DecodedCredential,
  PaidResource,
  PaymentRail,
  RailName,
  RailPayer,
  VerifiedPayment,
} from "./rail.ts";

/**
 * One money path for every rail (issue 40, docs/decisions/070). An agent's payment is settled
 * first and paid into its payer's balance: the wallet of the payer's account-less user (one per
 * rail and payer, made on its first payment). The call is then held, charged and recorded exactly
 * as any wallet call (call-payment/index.ts, record.ts): its stream flows as it comes, a call that
 * fails leaves the money on the balance for the next call, and the payer may ask the rest back.
 *
 * Each rail keeps its payments in a book (`PaymentBook`: x402_payments, mpp_payments): the book's
 * unique identity makes one credential pay once whatever the process, and its sweep resolves a
 * settlement whose outcome was unknown (credited to the payer when the money arrives, failed when
 * it never moved). Nothing here knows a rail's protocol.
 */
export interface PaymentBook {
  /** Whether this payment's identity was written down already (a replay). */
  used(payment: DecodedCredential): Promise<boolean>;
  /** The payer's payment with this id of its own (`idempotencyId`) that was not refused, if any. */
  paidBefore(payerUserId: string, idempotencyId: string): Promise<string | undefined>;
  /** Writes the payment down, settling, under its identity; undefined when it exists (a replay that raced). */
  claim(payment: VerifiedPayment, payerUserId: string, applicationId: string): Promise<string | undefined>;
  /** The money arrived: the payment credited to its payer's wallet, once, in one transaction. */
  credit(id: string, reference: string): Promise<void>;
  /** It never moved. */
  fail(id: string, reason: string): Promise<void>;
  /** Unknown yet: kept for the sweep. */
  pend(id: string, reason: string, reference?: string): Promise<void>;
  /** Resolves pending settlements; how many it ended. */
  sweep(log: FastifyBaseLogger): Promise<number>;
  /** The payer's credited payments and what each can still give back, in the order refunds take them. */
  creditedOf(payerUserId: string): Promise<{ reference: string; amountMicros: number }[]>;
}

/** A payment paid into its payer's balance: who pays the call now, and the rail's answer headers. */
export interface AgentPaid {
  payerUserId: string;
  paymentId: string;
  rail: RailName;
  headers: Record<string, string>;
  /**
   * The payment's own id (x402's payment-identifier): the call's Idempotency-Key when the request
   * has none, so a retry is answered from the first answer (gateway/call-lifecycle.ts).
   */
  idempotencyId?: string;
}

/** What a payer is told to wait before retrying after a settlement whose outcome is unknown. */
const RETRY_AFTER_SECONDS = 30;

/**
 * Verifies a credential for `resource`, writes it down under its identity, settles it and credits
 * its amount to the payer's balance. 402 when it cannot pay (named), when it was used before, or
 * when the rail refuses to settle; 503 with Retry-After while the settlement is unknown (the sweep
 * credits it if it arrives: nothing is lost).
 */
export async function payIntoBalance(
  db: Database,
  rail: PaymentRail,
  book: PaymentBook,
  credential: string,
  resource: PaidResource & { applicationId: string },
): Promise<AgentPaid> {
  const decoded = await rail.decode(credential, resource);
  const replay = () =>
    rail.refuse(
      resource,
      "payment_already_used",
      "This payment was already used: sign a new payment for each call (or ask for a budget and a balance key, see the docs)",
    );
  if (await book.used(decoded)) throw await replay();
  const verified = await rail.verify(decoded, resource);
  const payerUserId = await payerUserOf(db, verified.payer);
  const { idempotencyId } = verified;
  // A retry naming a payment this payer made already (x402's payment-identifier) pays nothing: its
  // signature proved who it is, the earlier payment is on its balance, and the call's own
  // idempotency answers it once. The new authorization is never settled.
  const earlier = idempotencyId ? await book.paidBefore(payerUserId, idempotencyId) : undefined;
  const paymentId = earlier ? undefined : await book.claim(verified, payerUserId, resource.applicationId);
  const retried =
    earlier ?? (idempotencyId && !paymentId ? await book.paidBefore(payerUserId, idempotencyId) : undefined);
  if (retried)
    return {
      payerUserId,
      paymentId: retried,
      rail: rail.name,
      headers: { "promptmint-payment-id": retried, "promptmint-payment-replayed": "true" },
      idempotencyId,
    };
  if (!paymentId) throw await replay();
  const settlement = await rail.settle(verified);
  if (settlement.kind === "settled") {
    await book.credit(paymentId, settlement.reference);
    return {
      payerUserId,
      paymentId,
      rail: rail.name,
      headers: { ...settlement.headers, "promptmint-payment-id": paymentId },
      idempotencyId,
    };
  }
  if (settlement.kind === "refused") {
    await book.fail(paymentId, `settlement refused: ${settlement.reason}`);
    throw await rail.refuse(
      resource,
      "payment_refused",
      `Your payment could not be settled (${settlement.reason}); nothing was charged. Sign a new payment and retry.`,
    );
  }
  await book.pend(paymentId, settlement.reason, settlement.reference);
  throw new AppError(
    "unavailable",
    `Your payment ${paymentId} was sent but its settlement is not confirmed yet (${settlement.reason}). The call did not run. If the money arrives it is kept on your balance (ask for it back, or spend it, with a balance key); if not, nothing moved. Retry later.`,
    { headers: { "retry-after": String(RETRY_AFTER_SECONDS), "promptmint-payment-id": paymentId } },
  );
}

/**
 * The payer's account-less user: issuer the rail's name, subject the rail's payer (x402:
 * `network:address`), one per pair, made on first payment and found by that identity alone. Its
 * username is `rail:subject`: usernames people choose never hold a colon (decision 064), so no one
 * can take a payer's name first.
 */
export async function payerUserOf(db: Database, payer: RailPayer): Promise<string> {
  const find = () =>
    db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.issuer, payer.rail), eq(users.subject, payer.subject)));
  const [found] = await find();
  if (found) return found.id;
  await db
    .insert(users)
    .values({
      issuer: payer.rail,
      subject: payer.subject,
      username: `${payer.rail}:${payer.subject}`,
      email: "",
      displayName: `${payer.rail} payer ${payer.label}`,
    })
    .onConflictDoNothing();
  const [made] = await find();
  if (!made) throw new Error(`could not make the ${payer.rail} payer's user`);
  return made.id;
}

/** The rails whose payers are account-less users (their issuer). */
export const RAIL_ISSUERS: readonly RailName[] = ["x402", "mpp"];

/** How long a refund waits for the payer's leases (call-payment/leases.ts) to give their money back. */
const RECALL_WAIT_MS = 3_000;

export interface RefundResult {
  refundId: string | null;
  amountMicros: number;
  status: "refunded" | "owed" | "nothing";
  reference?: string;
  reason?: string;
}

/**
 * Gives an account-less payer's balance back (issue 40): every lease holding its money is recalled
 * first (their unspent rest returns to the wallet within a moment), then the whole available
 * balance leaves the wallet for `refunds_owed` in one transaction (the wallet row locked: a call
 * starting at the same time takes its price first or finds the money gone, never both), then the
 * rail pays it back. A rail that cannot (x402 has no refund) leaves it owed, named in reconcile and
 * the operator's list; a rail that fails leaves it owed too, nothing lost.
 *
 * The balance is taken as one refund per payment it goes back through (the payer's credited
 * payments, newest first; what they cannot carry is one more refund, owed), each refunded on its
 * own: when the rail pays some and fails the next, the books say exactly which were paid and
 * which are owed. (One refund over several payments was marked owed whole when a later part
 * failed, though the rail had paid the first: the operator would then pay it a second time.)
 * The answer sums them: `refunded` when every part was, else `owed`, its id the first part's.
 */
export async function refundBalance(
  db: Database,
  rails: ReadonlyMap<RailName, { rail: PaymentRail; book: PaymentBook }>,
  payerUserId: string,
  log: FastifyBaseLogger,
): Promise<RefundResult> {
  const [user] = await db
    .select({ issuer: users.issuer, subject: users.subject })
    .from(users)
    .where(eq(users.id, payerUserId));
  const railName = RAIL_ISSUERS.find((name) => name === user?.issuer);
  if (!user || !railName)
    throw new AppError(
      "forbidden",
      "Only an agent's balance (paid with x402 or MPP) can be asked back here; an account's wallet is not refunded through the API",
    );
  const entry = rails.get(railName);
  if (!entry)
    throw new AppError(
      "unavailable",
      `This server does not take ${railName} payments now: the refund cannot be paid`,
    );
  const deadline = Date.now() + RECALL_WAIT_MS;
  while ((await recallHolds(db, payerUserId)) > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const wallet = await accountFor(db, "wallet", payerUserId);
  const owedAccount = await accountFor(db, "refunds_owed", null);
  const payments = await entry.book.creditedOf(payerUserId);
  const parts = await db.transaction(async (tx) => {
    const [row] = await queryRows<{ balance: string }>(
      tx as unknown as Database,
      sql`select balance_micros::text as balance from ledger_accounts where id = ${wallet}::uuid for update`,
    );
    const amount = Number(row?.balance ?? 0);
    if (amount <= 0) return [];
    const taken: { id: string; amount: number; payments: typeof payments }[] = [];
    for (const part of refundParts(amount, payments)) {
      const [refund] = await tx
        .insert(agentRefunds)
        .values({
          payerUserId,
          rail: railName,
          amountMicros: part.amount,
          through: part.payments[0]?.reference ?? null,
        })
        .returning({ id: agentRefunds.id });
      if (!refund) throw new Error("could not write a refund");
      await postTransaction(tx as unknown as Database, {
        kind: "agent_refund",
        reference: refund.id,
        description: `Balance asked back by its ${railName} payer`,
        entries: [
          { accountId: wallet, amountMicros: -part.amount },
          { accountId: owedAccount, amountMicros: part.amount },
        ],
      });
      taken.push({ id: refund.id, ...part });
    }
    return taken;
  });
  const [first] = parts;
  if (!first) return { refundId: null, amountMicros: 0, status: "nothing" };
  const payer: RailPayer = { rail: railName, subject: user.subject, label: user.subject };
  const owed: string[] = [];
  const references: string[] = [];
  for (const part of parts) {
    const outcome = await entry.rail
      .refund(payer, part.amount, part.payments, part.id)
      .catch((error: unknown): { kind: "owed"; reason: string } => {
        log.error({ err: error, refundId: part.id }, "a rail could not pay a refund; it stays owed");
        return { kind: "owed", reason: `the ${railName} rail failed: ${(error as Error).message}` };
      });
    if (outcome.kind === "owed") {
      await db
        .update(agentRefunds)
        .set({ reason: outcome.reason, updatedAt: new Date() })
        .where(eq(agentRefunds.id, part.id));
      owed.push(outcome.reason);
      continue;
    }
    await markRefunded(db, part.id, outcome.reference);
    references.push(outcome.reference);
  }
  const amountMicros = parts.reduce((sum, part) => sum + part.amount, 0);
  if (owed.length > 0)
    return {
      refundId: first.id,
      amountMicros,
      status: "owed",
      reason: [...new Set(owed)].join("; "),
      ...(references.length > 0 ? { reference: references.join(",") } : {}),
    };
  return { refundId: first.id, amountMicros, status: "refunded", reference: references.join(",") };
}

/** How long an owed refund waits before the sweep asks its rail again (its first try is long over). */
const REFUND_RETRY_AFTER_SECONDS = 300;

/**
 * Owed refunds whose rail's answer was never had (the process died between the rail and the
 * books, or the rail failed: for Stripe a 5xx or a timeout may have refunded) are asked again
 * through the payment they go back through, with the same key: the rail answers what it did (a
 * refund made before is not made twice), and the books follow. Refunds the rail refused, or that
 * no payment carries, stay owed (the operator's). How many were paid.
 */
export async function retryOwedRefunds(
  db: Database,
  rails: ReadonlyMap<RailName, { rail: PaymentRail; book: PaymentBook }>,
  log: FastifyBaseLogger,
): Promise<number> {
  const names = [...rails.keys()];
  if (names.length === 0) return 0;
  const candidates = await db
    .select()
    .from(agentRefunds)
    .where(
      and(
        eq(agentRefunds.status, "owed"),
        isNotNull(agentRefunds.through),
        inArray(agentRefunds.rail, names),
        or(isNull(agentRefunds.reason), like(agentRefunds.reason, "the % rail failed:%")),
        sql`${agentRefunds.updatedAt} < now() - make_interval(secs => ${REFUND_RETRY_AFTER_SECONDS})`,
      ),
    )
    .orderBy(agentRefunds.updatedAt)
    .limit(100);
  let paid = 0;
  for (const refund of candidates) {
    // Claimed for the time of its try: another sweeper finds it fresh and leaves it.
    const [claimed] = await db
      .update(agentRefunds)
      .set({ updatedAt: new Date() })
      .where(
        and(
          eq(agentRefunds.id, refund.id),
          eq(agentRefunds.status, "owed"),
          sql`${agentRefunds.updatedAt} < now() - make_interval(secs => ${REFUND_RETRY_AFTER_SECONDS})`,
        ),
      )
      .returning({ id: agentRefunds.id });
    const entry = rails.get(refund.rail);
    if (!claimed || !entry || !refund.through) continue;
    const [user] = await db
      .select({ subject: users.subject })
      .from(users)
      .where(eq(users.id, refund.payerUserId));
    const payer: RailPayer = { rail: refund.rail, subject: user?.subject ?? "", label: user?.subject ?? "" };
    const amount = Number(refund.amountMicros);
    const outcome = await entry.rail
      .refund(payer, amount, [{ reference: refund.through, amountMicros: amount }], refund.id)
      .catch((error: unknown): { kind: "owed"; reason: string } => {
        log.warn({ err: error, refundId: refund.id }, "a refund's rail failed again; it stays owed");
        return { kind: "owed", reason: `the ${refund.rail} rail failed: ${(error as Error).message}` };
      });
    if (outcome.kind === "owed") {
      await db
        .update(agentRefunds)
        .set({ reason: outcome.reason, updatedAt: new Date() })
        .where(and(eq(agentRefunds.id, refund.id), eq(agentRefunds.status, "owed")));
      continue;
    }
    await markRefunded(db, refund.id, outcome.reference);
    paid += 1;
  }
  return paid;
}

/**
 * A balance of `amount` split by the payments it goes back through, newest first: each carries
 * at most what it paid; the rest, if any, is one more part through none (owed).
 */
export function refundParts<P extends { amountMicros: number }>(
  amount: number,
  payments: P[],
): { amount: number; payments: P[] }[] {
  const parts: { amount: number; payments: P[] }[] = [];
  let remaining = amount;
  for (const payment of payments) {
    if (remaining <= 0) break;
    const part = Math.min(remaining, payment.amountMicros);
    if (part <= 0) continue;
    parts.push({ amount: part, payments: [payment] });
    remaining -= part;
  }
  if (remaining > 0) parts.push({ amount: remaining, payments: [] });
  return parts;
}

/** A refund paid on its rail, once: out of `refunds_owed`, back to the outside (`clearing`). */
async function markRefunded(db: Database, refundId: string, reference: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [refund] = await tx
      .update(agentRefunds)
      .set({ status: "refunded", reference, updatedAt: new Date() })
      .where(and(eq(agentRefunds.id, refundId), eq(agentRefunds.status, "owed")))
      .returning({ amount: agentRefunds.amountMicros });
    if (!refund) return;
    const amount = Number(refund.amount);
    const [owed, clearing] = await Promise.all([
      accountFor(tx as unknown as Database, "refunds_owed", null),
      accountFor(tx as unknown as Database, "clearing", null),
    ]);
    await postTransaction(tx as unknown as Database, {
      kind: "agent_refund_paid",
      reference: refundId,
      description: `Refund paid on its rail (${reference})`,
      entries: [
        { accountId: owed, amountMicros: -amount },
        { accountId: clearing, amountMicros: amount },
      ],
    });
  });
}
