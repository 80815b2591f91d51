import { sql } from "drizzle-orm";
import { queryRows } from "../../db/client.ts";
import { type Caller, createCaller, fundWallet } from "../caller.ts";
import { type Attack, journalEvent, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";

/**
 * Refunds and disputes of the consumers' sandbox top-ups, and the creator's payouts, while calls
 * run (decision 045): the operator's sandbox buttons move the same applyReversal as Stripe's
 * webhooks. The judge's reconcile checks that every reversal's parts add up to what it took back
 * and the ledger stays balanced. A payer a reversal leaves in debt (calls in flight when it
 * landed) tops up at once, inside a top-up window, so its 402s meanwhile are not judged unfair.
 */
export const OPERATOR_EMAIL = "operator@attack.test";

const operators = new WeakMap<Attack, Promise<Caller>>();
/** The attack's one operator (ADMIN_EMAILS, cluster.ts), signed up once through the issuer's process; a failed sign-up (a kill there) is tried again next time. */
export const operatorOf = (attack: Attack) => {
  let operator = operators.get(attack);
  if (!operator) {
    operator = createCaller(attack.cluster.nodes[0]?.baseUrl ?? "", "Operator", {
      email: OPERATOR_EMAIL,
      verified: true,
    });
    operator.catch(() => operators.delete(attack));
    operators.set(attack, operator);
  }
  return operator;
};

/** A consumer's sandbox payment not yet wholly taken back, newest first. */
async function reversiblePayment(attack: Attack, prng: Prng) {
  const payer = prng.pick(attack.world.consumers.slice(0, -1));
  const [payment] = await queryRows<{ external_id: string; left: string }>(
    attack.cluster.database.db,
    sql`select p.external_id, (p.amount_cents - coalesce(r.reversed_cents, 0))::text as left
        from payments p left join reversed_payments r on r.payment_id = p.id
        where p.user_id = ${payer.id}::uuid and p.gateway = 'sandbox' and p.status = 'succeeded'
          and p.consumed_kind = 'wallet' and p.amount_cents > coalesce(r.reversed_cents, 0)
        order by p.created_at desc limit 1`,
  );
  return payment ? { payer, intent: payment.external_id, left: Number(payment.left) } : undefined;
}

/** The payer's debt, paid by a top-up inside a top-up window (a reversal may leave one). */
async function settleDebt(
  attack: Attack,
  prng: Prng,
  payer: Attack["world"]["consumers"][number],
  from: number,
) {
  const window: { from: number; to?: number } = { from };
  attack.topUps.set(payer.id, [...(attack.topUps.get(payer.id) ?? []), window]);
  try {
    const [row] = await queryRows<{ owed: string }>(
      attack.cluster.database.db,
      sql`select coalesce(-sum(balance_micros), 0)::text as owed from ledger_accounts
          where kind = 'debt' and owner_id = ${payer.id}::uuid`,
    );
    const owedCents = Math.ceil(Number(row?.owed ?? 0) / 10_000);
    if (owedCents > 0) await topUpWhenAble(attack, prng, payer, Math.max(300, owedCents + 100));
  } finally {
    window.to = Date.now() + 1_000;
  }
}

/**
 * A top-up as a person would make it: a process being restarted after a kill is tried again on
 * the next turn, and a payer suspended meanwhile (suspensions.ts) waits for the lift, as a person
 * waits for support; still suspended after that, the debt stays for a later top-up (not a harness
 * error: the product refused a suspended person's payment, as it must).
 */
async function topUpWhenAble(
  attack: Attack,
  prng: Prng,
  payer: Attack["world"]["consumers"][number],
  cents: number,
) {
  const giveUpAt = Date.now() + 30_000;
  for (;;) {
    try {
      await fundWallet(viaAnyNode(attack, prng, payer), cents);
      return;
    } catch (error) {
      const suspended = String(error).includes("account_suspended");
      if (Date.now() >= giveUpAt) {
        if (suspended) return;
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

export async function refundTopUp(attack: Attack, prng: Prng, actor: number) {
  const found = await reversiblePayment(attack, prng);
  if (!found) return;
  const cents = Math.min(found.left, prng.int(50, 400));
  const from = Date.now();
  await journalEvent(attack, actor, "refund", async () => {
    const operator = await operatorOf(attack);
    const answer = await operator.api("POST", "/api/admin/sandbox/refunds", {
      body: { payment_intent_id: found.intent, amount_cents: cents },
    });
    return {
      status: answer.status,
      detail: { payer: found.payer.name, cents, moved: answer.body?.moved_cents },
    };
  });
  await settleDebt(attack, prng, found.payer, from);
}

/** A dispute of a whole top-up (what refunds left of it), closed won or lost a moment later. */
export async function disputeTopUp(attack: Attack, prng: Prng, actor: number) {
  const found = await reversiblePayment(attack, prng);
  if (!found) return;
  const won = prng.int(0, 1) === 1;
  const from = Date.now();
  // A won dispute gives money back: a 402 around it is as ambiguous as one around a top-up.
  const window: { from: number; to?: number } = { from };
  attack.topUps.set(found.payer.id, [...(attack.topUps.get(found.payer.id) ?? []), window]);
  await journalEvent(attack, actor, "dispute", async () => {
    const operator = await operatorOf(attack);
    const opened = await operator.api("POST", "/api/admin/sandbox/disputes", {
      body: { payment_intent_id: found.intent, reason: "fraudulent" },
    });
    if (opened.status !== 200) return { status: opened.status, detail: { payer: found.payer.name } };
    await new Promise((resolve) => setTimeout(resolve, prng.int(50, 1500)));
    const closed = await operator.api("POST", `/api/admin/sandbox/disputes/${opened.body.id}/close`, {
      body: { status: won ? "won" : "lost" },
    });
    return {
      status: closed.status,
      detail: {
        payer: found.payer.name,
        taken: opened.body.moved_cents,
        given: closed.body?.moved_cents,
        won,
      },
    };
  });
  window.to = Date.now() + 1_000;
  await settleDebt(attack, prng, found.payer, from);
}

const onboarded = new WeakSet<Attack>();

/** The creator is paid out what is available (PAYOUT_HOLD_DAYS=0 in the attack), onboarded once. */
export async function payOut(attack: Attack, prng: Prng, actor: number) {
  const creator = viaAnyNode(attack, prng, attack.world.creator);
  await journalEvent(attack, actor, "payout", async () => {
    if (!onboarded.has(attack)) {
      const link = await creator.api("POST", "/api/payouts/onboarding");
      if (link.status !== 200)
        return { status: link.status, detail: { step: "onboarding", code: link.body?.code } };
      const done = await fetch(link.body.url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "bank=succeeds",
        redirect: "manual",
      });
      if (done.status >= 400) return { status: done.status, detail: { step: "onboarding" } };
      onboarded.add(attack);
    }
    const paid = await creator.api("POST", "/api/payouts/", {
      body: {},
      headers: { "idempotency-key": `attack-${actor}-${Date.now()}` },
    });
    // 409: nothing available (or below the minimum, or a chargeback debt ate it): not a failure.
    return { status: paid.status, detail: { cents: paid.body?.amount_cents, code: paid.body?.code } };
  });
}
