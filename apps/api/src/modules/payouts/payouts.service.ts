import { createHash, randomBytes } from "node:crypto";
import { isUuid } from "@promptmint/contracts";
import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type Stripe from "stripe";
import type { Config } from "../../config.ts";
import { type Database, queryRows } from "../../db/client.ts";
import { connectAccounts, payouts } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { centsToMicros, microsToCents } from "../../lib/money.ts";
import { isPayoutBlocked } from "../admin/suspensions.ts";
import { clockNow } from "./clock.ts";
import {
  availability,
  lockPayoutAccounts,
  postPayoutPaid,
  postPayoutReturn,
  postWithdrawal,
  settleDebtFromEarnings,
} from "./payout-postings.ts";
import type { StripeConnect } from "./stripe-connect.ts";

export type PayoutRow = typeof payouts.$inferSelect;
export type ConnectAccountRow = typeof connectAccounts.$inferSelect;

export interface PayoutDeps {
  db: Database;
  config: Config;
  /** Stripe Connect when Stripe is configured; otherwise the sandbox pays. */
  connect: StripeConnect | undefined;
  log?: { warn(obj: object, msg: string): void };
}

/** The sandbox's failing test bank account fails payouts like Stripe's test account 000111111116. */
const SANDBOX_FAILURE = { code: "account_closed", message: "The bank account has been closed" };
/** How long a sandbox onboarding link stays valid (Stripe's account links last minutes). */
const SANDBOX_LINK_TTL_MS = 30 * 60_000;
/** A payout left pending this long is taken by the retrier (its request may still be running before). */
export const PAYOUT_RETRY_AFTER_MS = 60_000;

export const gatewayOf = (deps: PayoutDeps) => (deps.connect ? ("stripe" as const) : ("sandbox" as const));

/** The sandbox pays no real money: refused in production, like sandbox payments. */
export function requireSandbox(deps: PayoutDeps): void {
  if (deps.connect) throw new AppError("bad_request", "This server pays creators through Stripe Connect");
  if (deps.config.isProduction)
    throw new AppError(
      "unavailable",
      "Sandbox payouts are disabled in production: set STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY",
    );
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export async function connectAccountOf(db: Database, userId: string): Promise<ConnectAccountRow | undefined> {
  const [row] = await db.select().from(connectAccounts).where(eq(connectAccounts.userId, userId)).limit(1);
  return row;
}

/**
 * Starts (or resumes) onboarding: Stripe's account link for the creator's Express account,
 * created on first use; or the sandbox's own onboarding page behind a single-use link.
 */
export async function startOnboarding(
  deps: PayoutDeps,
  user: { id: string; email: string },
): Promise<{ url: string; gateway: "stripe" | "sandbox" }> {
  const { db, config } = deps;
  const gateway = gatewayOf(deps);
  if (gateway === "sandbox") requireSandbox(deps);
  let account = await connectAccountOf(db, user.id);
  if (account && account.gateway !== gateway) {
    // The server moved between sandbox and Stripe: the old account cannot be paid any more.
    await db.delete(connectAccounts).where(eq(connectAccounts.userId, user.id));
    account = undefined;
  }
  if (!account) {
    const externalId = deps.connect
      ? await deps.connect.createAccount(user)
      : `acct_sbx_${randomBytes(8).toString("hex")}`;
    await db.insert(connectAccounts).values({ userId: user.id, gateway, externalId }).onConflictDoNothing();
    account = await connectAccountOf(db, user.id);
    if (!account) throw new Error("connected account was not stored");
  }
  const returnUrl = `${config.publicUrl}/earnings?onboarding=return`;
  if (deps.connect) {
    const url = await deps.connect.accountLink(account.externalId, {
      returnUrl,
      refreshUrl: `${config.publicUrl}/earnings?onboarding=refresh`,
    });
    return { url, gateway };
  }
  const token = randomBytes(24).toString("base64url");
  await db
    .update(connectAccounts)
    .set({
      onboardingTokenSha256: sha256(token),
      onboardingTokenExpiresAt: new Date(Date.now() + SANDBOX_LINK_TTL_MS),
      updatedAt: new Date(),
    })
    .where(eq(connectAccounts.userId, user.id));
  return { url: `${config.publicUrl}/api/payouts/sandbox/onboarding/${token}`, gateway };
}

/** The sandbox onboarding link's account, when the link is valid. */
export async function sandboxOnboardingAccount(db: Database, token: string) {
  const [row] = await db
    .select()
    .from(connectAccounts)
    .where(
      and(
        eq(connectAccounts.gateway, "sandbox"),
        eq(connectAccounts.onboardingTokenSha256, sha256(token)),
        sql`${connectAccounts.onboardingTokenExpiresAt} > now()`,
      ),
    )
    .limit(1);
  return row;
}

/** The sandbox's `account.updated`: the onboarding page was completed with a test bank account. */
export async function completeSandboxOnboarding(
  db: Database,
  token: string,
  bank: "succeeds" | "fails",
): Promise<boolean> {
  const rows = await db
    .update(connectAccounts)
    .set({
      detailsSubmitted: true,
      payoutsEnabled: true,
      disabledReason: null,
      requirementsDue: [],
      sandboxBank: bank,
      onboardingTokenSha256: null,
      onboardingTokenExpiresAt: null,
      updatedAt: new Date(),
    })
    .where(
      and(
        eq(connectAccounts.gateway, "sandbox"),
        eq(connectAccounts.onboardingTokenSha256, sha256(token)),
        sql`${connectAccounts.onboardingTokenExpiresAt} > now()`,
      ),
    )
    .returning({ userId: connectAccounts.userId });
  return rows.length > 0;
}

/** Stripe's `account.updated` (also read back on the return from onboarding): the flags follow it. */
export async function applyAccountUpdated(db: Database, account: Stripe.Account): Promise<void> {
  await db
    .update(connectAccounts)
    .set({
      detailsSubmitted: account.details_submitted ?? false,
      payoutsEnabled: account.payouts_enabled ?? false,
      disabledReason: account.requirements?.disabled_reason ?? null,
      requirementsDue: account.requirements?.currently_due ?? [],
      updatedAt: new Date(),
    })
    .where(and(eq(connectAccounts.gateway, "stripe"), eq(connectAccounts.externalId, account.id)));
}

export type AccountState = "not_started" | "incomplete" | "restricted" | "enabled";

export function accountState(account: ConnectAccountRow | undefined): AccountState {
  if (!account) return "not_started";
  if (account.payoutsEnabled) return "enabled";
  if (account.detailsSubmitted) return "restricted";
  return "incomplete";
}

/**
 * A creator's Withdraw, or the schedule's: in one DB transaction that locks the creator's earnings
 * (and the payouts account), checks what is available, inserts the payout row and moves the money
 * earnings → payouts; a request repeated with the same key answers the first payout. Stripe is
 * called after the commit (`submitPayout`); a failure there leaves the payout pending for the
 * retrier, never the money in two places.
 */
export async function withdraw(
  deps: PayoutDeps,
  creatorId: string,
  request: { amountCents?: number; idempotencyKey: string; automatic?: boolean },
): Promise<{ payout: PayoutRow; replayed: boolean }> {
  const { db, config } = deps;
  const gateway = gatewayOf(deps);
  if (gateway === "sandbox") requireSandbox(deps);
  // A test clock moves sandbox time only: real payouts keep the real hold period.
  const now = deps.connect ? new Date() : await clockNow(db, creatorId);
  const minimum = config.payouts.minimumCents;
  const result = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockPayoutAccounts(t, creatorId);
    const [existing] = await t
      .select()
      .from(payouts)
      .where(and(eq(payouts.creatorId, creatorId), eq(payouts.idempotencyKey, request.idempotencyKey)))
      .limit(1);
    if (existing) {
      if ((existing.requestedCents ?? undefined) !== request.amountCents)
        throw new AppError(
          "conflict",
          "This Idempotency-Key was already used for a payout of a different amount",
        );
      return { payout: existing, replayed: true };
    }
    if (await isPayoutBlocked(t, creatorId))
      throw new AppError(
        "account_suspended",
        "Your account is suspended: payouts are paused until the operator lifts the suspension",
      );
    const account = await connectAccountOf(t, creatorId);
    if (!account || account.gateway !== gateway || !account.payoutsEnabled)
      throw new AppError(
        "conflict",
        account?.detailsSubmitted
          ? "Payouts are not enabled on your payout account yet: Stripe needs more details"
          : "Set up payouts first: connect a bank account from the Earnings page",
      );
    // What a chargeback left the creator owing is paid from their available earnings first.
    const before = await availability(t, creatorId, now, config.payouts.holdDays);
    await settleDebtFromEarnings(t, creatorId, before.available);
    const { available, pending } = await availability(t, creatorId, now, config.payouts.holdDays);
    const availableCents = microsToCents(available);
    if (availableCents <= 0) {
      const next = pending[0];
      throw new AppError(
        "conflict",
        next
          ? `Nothing is available to pay out yet: your next earnings become available on ${next.availableAt.toISOString().slice(0, 10)}`
          : "Nothing is available to pay out",
      );
    }
    const amountCents = request.amountCents ?? availableCents;
    if (request.amountCents !== undefined && request.amountCents < minimum)
      throw invalidFields({ amount_cents: `must be at least the minimum payout, ${minimum} cents` });
    if (amountCents < minimum)
      throw new AppError(
        "conflict",
        `${dollars(availableCents)} is available, below the minimum payout of ${dollars(minimum)}`,
      );
    if (amountCents > availableCents)
      throw new AppError(
        "conflict",
        `amount_cents is more than the ${dollars(availableCents)} available to pay out`,
        { fields: { amount_cents: `must be at most ${availableCents} (available now)` } },
      );
    const [payout] = await t
      .insert(payouts)
      .values({
        creatorId,
        gateway,
        connectAccountId: account.externalId,
        amountCents,
        automatic: request.automatic ?? false,
        idempotencyKey: request.idempotencyKey,
        requestedCents: request.amountCents ?? null,
      })
      .returning();
    if (!payout) throw new Error("payout was not stored");
    if (!(await postWithdrawal(t, payout))) throw new Error("payout was already posted");
    return { payout, replayed: false };
  });
  if (!result.replayed) await submitPayout(deps, result.payout.id);
  const [fresh] = await db.select().from(payouts).where(eq(payouts.id, result.payout.id));
  return { payout: fresh ?? result.payout, replayed: result.replayed };
}

/** Counts a failed attempt at a payout's Stripe step and keeps its error for the operator; returns the error. */
async function countFailedAttempt(db: Database, payoutId: string, error: unknown): Promise<string> {
  const message = error instanceof Error ? error.message.slice(0, 300) : "unknown error";
  await db
    .update(payouts)
    .set({ attempts: sql`${payouts.attempts} + 1`, lastError: message, updatedAt: new Date() })
    .where(eq(payouts.id, payoutId));
  return message;
}

/**
 * Tells the payment provider about a pending payout: a transfer to the connected account, then a
 * payout on it, each with the payout's own idempotency key, so the retrier repeating this after a
 * crash or a failure makes neither twice. The sandbox does both at once and reports the outcome
 * as Stripe test mode would (paid, or failed for the failing test bank account).
 */
export async function submitPayout(deps: PayoutDeps, payoutId: string): Promise<void> {
  const { db } = deps;
  const [payout] = await db.select().from(payouts).where(eq(payouts.id, payoutId));
  if (payout?.status !== "pending") return;
  if (payout.gateway === "sandbox") return submitSandboxPayout(deps, payout);
  const connect = deps.connect;
  if (!connect) return;
  try {
    const transferId = payout.transferId ?? (await connect.transfer(payout));
    await db
      .update(payouts)
      .set({ transferId, updatedAt: new Date() })
      .where(and(eq(payouts.id, payout.id), isNull(payouts.transferId)));
    const stripePayoutId = payout.stripePayoutId ?? (await connect.payout(payout));
    await db
      .update(payouts)
      .set({
        stripePayoutId,
        status: sql`case when ${payouts.status} = 'pending' then 'in_transit' else ${payouts.status} end`,
        inTransitAt: sql`coalesce(${payouts.inTransitAt}, now())`,
        lastError: null,
        updatedAt: new Date(),
      })
      .where(eq(payouts.id, payout.id));
  } catch (error) {
    const message = await countFailedAttempt(db, payout.id, error);
    deps.log?.warn(
      { payoutId: payout.id, err: message },
      "payout not yet submitted to Stripe; the retrier will finish it",
    );
  }
}

async function submitSandboxPayout(deps: PayoutDeps, payout: PayoutRow): Promise<void> {
  const { db } = deps;
  const account = await connectAccountOf(db, payout.creatorId);
  const suffix = randomBytes(8).toString("hex");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [moved] = await t
      .update(payouts)
      .set({
        transferId: `tr_sbx_${suffix}`,
        stripePayoutId: `po_sbx_${suffix}`,
        status: "in_transit",
        inTransitAt: new Date(),
        updatedAt: new Date(),
      })
      .where(and(eq(payouts.id, payout.id), eq(payouts.status, "pending")))
      .returning();
    if (!moved) return;
    if (account?.sandboxBank === "fails") {
      await markFailed(t, moved, SANDBOX_FAILURE);
      await t
        .update(payouts)
        .set({ reversalId: `trr_sbx_${suffix}` })
        .where(eq(payouts.id, moved.id));
    } else {
      await markPaid(t, moved);
    }
  });
}

/** `payout.paid`: in transit → paid, the money leaves through clearing. Once; never after a failure. */
export async function markPaid(tx: Database, payout: PayoutRow): Promise<boolean> {
  const [paid] = await tx
    .update(payouts)
    .set({ status: "paid", paidAt: new Date(), updatedAt: new Date() })
    .where(and(eq(payouts.id, payout.id), inArray(payouts.status, ["pending", "in_transit"])))
    .returning();
  if (!paid) return false;
  await postPayoutPaid(tx, paid);
  return true;
}

/**
 * `payout.failed` (even after `payout.paid`: banks can return a payout days later): failed with
 * the bank's reason, the money back to the creator's earnings, available at once. True when the
 * transfer still has to be reversed to bring the money back from the connected account.
 */
export async function markFailed(
  tx: Database,
  payout: PayoutRow,
  failure: { code: string | null; message: string },
): Promise<boolean> {
  const [failed] = await tx
    .update(payouts)
    .set({
      status: "failed",
      failureCode: failure.code,
      failureReason: failure.message,
      failedAt: new Date(),
      updatedAt: new Date(),
    })
    .where(and(eq(payouts.id, payout.id), inArray(payouts.status, ["pending", "in_transit", "paid"])))
    .returning();
  if (!failed) {
    // Already reversed (transfer.reversed came first): keep the bank's reason, nothing moves again.
    await tx
      .update(payouts)
      .set({ failureCode: failure.code, failureReason: failure.message, updatedAt: new Date() })
      .where(and(eq(payouts.id, payout.id), eq(payouts.status, "reversed")));
    return false;
  }
  await postPayoutReturn(tx, failed, { wasPaid: payout.status === "paid", reason: failure.message });
  return failed.transferId !== null && failed.reversalId === null;
}

/** `transfer.reversed`: the money is back on the platform; back to the creator's earnings, once. */
export async function markReversed(tx: Database, payout: PayoutRow, reversalId: string): Promise<void> {
  const [reversed] = await tx
    .update(payouts)
    .set({
      status: "reversed",
      failureReason: sql`coalesce(${payouts.failureReason}, 'The transfer to your payout account was reversed')`,
      reversalId: sql`coalesce(${payouts.reversalId}, ${reversalId})`,
      failedAt: sql`coalesce(${payouts.failedAt}, now())`,
      updatedAt: new Date(),
    })
    .where(and(eq(payouts.id, payout.id), inArray(payouts.status, ["pending", "in_transit", "paid"])))
    .returning();
  if (reversed) {
    await postPayoutReturn(tx, reversed, {
      wasPaid: payout.status === "paid",
      reason: "the transfer was reversed",
    });
    return;
  }
  // A failed payout whose reversal we asked for: only note it (its money was returned on failure).
  await tx
    .update(payouts)
    .set({ reversalId: sql`coalesce(${payouts.reversalId}, ${reversalId})`, updatedAt: new Date() })
    .where(eq(payouts.id, payout.id));
}

/** The payout a Connect event is about, locked, and only if it belongs to the event's account. */
async function payoutFor(
  tx: Database,
  match: { stripePayoutId?: string; transferId?: string; payoutId?: string; account?: string | null },
): Promise<PayoutRow | undefined> {
  const conditions = [];
  if (match.stripePayoutId) conditions.push(eq(payouts.stripePayoutId, match.stripePayoutId));
  if (match.transferId) conditions.push(eq(payouts.transferId, match.transferId));
  if (match.payoutId && isUuid(match.payoutId)) conditions.push(eq(payouts.id, match.payoutId));
  if (conditions.length === 0) return undefined;
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`select id from payouts where gateway = 'stripe' and (${sql.join(conditions, sql` or `)}) limit 1 for update`,
  );
  const id = rows[0]?.id;
  if (!id) return undefined;
  const [payout] = await tx.select().from(payouts).where(eq(payouts.id, id));
  if (!payout) return undefined;
  if (match.account && match.account !== payout.connectAccountId) return undefined;
  return payout;
}

/** The Connect events the Stripe webhook hands to payouts. */
export const CONNECT_EVENT_TYPES = new Set([
  "account.updated",
  "payout.paid",
  "payout.failed",
  "transfer.reversed",
]);

/**
 * Applies one Connect event inside the webhook's transaction (which also records its id, so it is
 * applied once). Returns the work to do once that transaction has committed (reversing a failed
 * payout's transfer); if that fails, the retrier does it.
 */
export async function applyConnectEvent(
  deps: PayoutDeps,
  tx: Database,
  event: Stripe.Event,
): Promise<(() => Promise<void>) | undefined> {
  switch (event.type) {
    case "account.updated":
      await applyAccountUpdated(tx, event.data.object);
      return undefined;
    case "payout.paid":
    case "payout.failed": {
      const object = event.data.object;
      const payout = await payoutFor(tx, {
        stripePayoutId: object.id,
        payoutId: object.metadata?.payout_id,
        account: event.account,
      });
      if (!payout) return undefined;
      if (event.type === "payout.failed") {
        const reverse = await markFailed(tx, payout, {
          code: object.failure_code,
          message: object.failure_message ?? object.failure_code ?? "The payout failed",
        });
        return reverse ? () => reverseFailedPayout(deps, payout.id) : undefined;
      }
      if (object.amount !== payout.amountCents)
        throw new AppError(
          "conflict",
          `Stripe reported a payout of ${object.amount} cents for a ${payout.amountCents} cent payout`,
        );
      await tx
        .update(payouts)
        .set({ stripePayoutId: object.id })
        .where(and(eq(payouts.id, payout.id), isNull(payouts.stripePayoutId)));
      await markPaid(tx, payout);
      return undefined;
    }
    case "transfer.reversed": {
      const object = event.data.object;
      if (object.amount_reversed < object.amount) {
        deps.log?.warn({ transfer: object.id }, "a partial transfer reversal is left to the operator");
        return undefined;
      }
      const payout = await payoutFor(tx, { transferId: object.id, payoutId: object.metadata?.payout_id });
      if (!payout || payout.transferId !== object.id) return undefined;
      await markReversed(tx, payout, object.reversals?.data?.[0]?.id ?? "reversed");
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Brings a failed payout's money back from the connected account (a transfer reversal, once). */
export async function reverseFailedPayout(deps: PayoutDeps, payoutId: string): Promise<void> {
  const { db, connect } = deps;
  if (!connect) return;
  const [payout] = await db.select().from(payouts).where(eq(payouts.id, payoutId));
  if (payout?.status !== "failed" || !payout.transferId || payout.reversalId) return;
  try {
    const reversalId = await connect.reverseTransfer({ ...payout, transferId: payout.transferId });
    await db
      .update(payouts)
      .set({ reversalId, updatedAt: new Date() })
      .where(and(eq(payouts.id, payout.id), isNull(payouts.reversalId)));
  } catch (error) {
    const message = await countFailedAttempt(db, payout.id, error);
    deps.log?.warn({ payoutId, err: message }, "transfer reversal failed; the retrier will repeat it");
  }
}

/**
 * Finishes what a crash or a Stripe failure left: pending payouts are submitted again (same
 * idempotency keys), failed payouts' transfers reversed. Each is claimed by moving its
 * `updated_at`, with SKIP LOCKED, so two processes do not take the same one at once (and if
 * they did, Stripe's idempotency keys would still make one transfer and one payout).
 */
export async function retryPayouts(deps: PayoutDeps, olderThanMs = PAYOUT_RETRY_AFTER_MS): Promise<number> {
  const { db } = deps;
  const before = new Date(Date.now() - olderThanMs).toISOString();
  const claimed = await queryRows<{ id: string; status: string }>(
    db,
    sql`update payouts set updated_at = now()
        where id in (
          select id from payouts
          where updated_at <= ${before}::timestamptz
            and (status = 'pending'
              or (status = 'failed' and gateway = 'stripe' and transfer_id is not null and reversal_id is null))
          order by updated_at limit 20 for update skip locked)
        returning id, status`,
  );
  for (const row of claimed) {
    if (row.status === "pending") await submitPayout(deps, row.id);
    else await reverseFailedPayout(deps, row.id);
  }
  return claimed.length;
}

/** The schedule's period a moment falls in: its UTC day, or its ISO week. */
export function schedulePeriod(schedule: "weekly" | "daily", now: Date): string {
  if (schedule === "daily") return now.toISOString().slice(0, 10);
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const weekday = day.getUTCDay() || 7;
  day.setUTCDate(day.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${day.getUTCFullYear()}-W${String(week).padStart(2, "0")}`;
}

/**
 * The automatic schedule (PAYOUT_SCHEDULE): once per period, each onboarded creator with at least
 * the minimum available is paid all of it. The key `auto:<period>` is unique per creator, and the
 * withdrawal locks the earnings, so several processes running it at once pay once.
 */
export async function runPayoutSchedule(deps: PayoutDeps): Promise<number> {
  const { db, config } = deps;
  const schedule = config.payouts.schedule;
  if (schedule === "manual") return 0;
  if (!deps.connect && config.isProduction) return 0;
  // Each creator's period by their own clock (a sandbox test clock moves one creator's, decision
  // 046); the SQL names the same period as schedulePeriod, from the same moment.
  const base = Date.now();
  const format = schedule === "daily" ? "YYYY-MM-DD" : 'IYYY-"W"IW';
  const minimumUnits = centsToMicros(config.payouts.minimumCents);
  const candidates = await queryRows<{ user_id: string; offset_ms: string }>(
    db,
    sql`select c.user_id, coalesce(k.offset_ms, 0)::text as offset_ms from connect_accounts c
        join ledger_accounts a on a.owner_id = c.user_id and a.kind = 'earnings'
        left join sandbox_clocks k on k.user_id = c.user_id and ${!deps.connect}
        where c.payouts_enabled and c.gateway = ${gatewayOf(deps)} and a.balance_micros >= ${minimumUnits}
          and not exists (select 1 from payouts p where p.creator_id = c.user_id
            and p.idempotency_key = 'auto:' || to_char(
              (${new Date(base).toISOString()}::timestamptz + coalesce(k.offset_ms, 0) * interval '1 millisecond')
                at time zone 'UTC', ${format}))
        limit 100`,
  );
  let paid = 0;
  for (const { user_id, offset_ms } of candidates) {
    const key = `auto:${schedulePeriod(schedule, new Date(base + Number(offset_ms)))}`;
    try {
      await withdraw(deps, user_id, { idempotencyKey: key, automatic: true });
      paid += 1;
    } catch (error) {
      // Below the minimum once pending money is left out, or nothing available: next sweep.
      if (!(error instanceof AppError)) throw error;
    }
  }
  return paid;
}

export async function payoutHistory(db: Database, creatorId: string, limit = 100): Promise<PayoutRow[]> {
  return db
    .select()
    .from(payouts)
    .where(eq(payouts.creatorId, creatorId))
    .orderBy(desc(payouts.createdAt))
    .limit(limit);
}

/** Cents paid out and on their way (pending or in transit). */
export async function payoutTotals(
  db: Database,
  creatorId: string,
): Promise<{ inTransit: number; paid: number }> {
  const [row] = await queryRows<{ in_transit: string; paid: string }>(
    db,
    sql`select coalesce(sum(amount_cents) filter (where status in ('pending', 'in_transit')), 0)::text as in_transit,
          coalesce(sum(amount_cents) filter (where status = 'paid'), 0)::text as paid
        from payouts where creator_id = ${creatorId}`,
  );
  return { inTransit: Number(row?.in_transit ?? 0), paid: Number(row?.paid ?? 0) };
}
