import { randomUUID } from "node:crypto";
import { walletBalances } from "../../modules/billing/balances.ts";
import { MICROS_PER_CENT } from "../../modules/billing/money.ts";
import { type Attack, pickApp, pickNode, pickPayer } from "./attack.ts";
import { type CallPlan, makeCall } from "./calls.ts";
import type { CallEntry } from "./journal.ts";
import type { Prng } from "./prng.ts";
import { type AttackApp, highestVisiblePrice, type Person } from "./world.ts";

function planCall(prng: Prng, app: AttackApp, streaming: boolean): CallPlan {
  const failing = prng.chance(0.06);
  return {
    style: prng.chance(0.5) ? "dify" : "openai",
    mode: app.mode,
    streaming,
    abortAfterChunks: streaming && prng.chance(0.4) ? prng.int(0, 12) : undefined,
    upstream: {
      delayMs: prng.int(20, 300),
      gapMs: streaming ? prng.int(3, 15) : 0,
      words: prng.int(15, 25),
      ...(failing ? { fail: prng.pick([500, 503]) } : {}),
    },
    idempotencyKey: prng.chance(0.15) ? randomUUID() : undefined,
    maxPriceCents: prng.chance(0.15) ? highestVisiblePrice(app, Date.now()) : undefined,
  };
}

export async function oneCall(attack: Attack, prng: Prng, actor: number, action: string, streaming: boolean) {
  const app = pickApp(attack, prng);
  await call(attack, prng, actor, action, pickPayer(attack, prng), app, planCall(prng, app, streaming));
}

/** Sends one call and journals what its client saw; a 402 is checked against the payer's money at once. */
async function call(
  attack: Attack,
  prng: Prng,
  actor: number,
  action: string,
  payer: Person,
  app: AttackApp,
  plan: CallPlan,
): Promise<void> {
  const node = pickNode(attack, prng);
  if (plan.idempotencyKey && !attack.idempotent.some((used) => used.key === plan.idempotencyKey))
    attack.idempotent.push({ key: plan.idempotencyKey, plan, payer, app });
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    const outcome = await makeCall(node.baseUrl, payer.apiKey.key, app.slug, plan);
    const entry: CallEntry = {
      kind: "call",
      seq: attack.journal.nextSeq(),
      actor,
      action,
      node: node.name,
      payer: payer.name,
      payerId: payer.id,
      app: app.label,
      appId: app.id,
      owner: payer === attack.world.creator,
      plan,
      startedAt,
      endedAt: Date.now(),
      ...outcome,
    };
    if (outcome.status === 402) {
      const { wallet, held } = await walletBalances(attack.cluster.database.db, payer.id);
      const topUps = attack.topUps.get(payer.id) ?? [];
      entry.refusal = {
        walletCents: wallet / MICROS_PER_CENT,
        heldCents: held / MICROS_PER_CENT,
        topUpOverlapped: topUps.some(
          (t) => t.from <= Date.now() && (t.to ?? Number.POSITIVE_INFINITY) >= startedAt,
        ),
      };
    }
    attack.journal.add(entry);
  });
}

/** Several calls of one pair at once: leases shared between calls, on both processes. */
export async function burst(attack: Attack, prng: Prng, actor: number) {
  const payer = pickPayer(attack, prng);
  const app = pickApp(attack, prng);
  const plans = Array.from({ length: prng.int(5, 12) }, () => planCall(prng, app, prng.chance(0.3)));
  await Promise.all(plans.map((plan) => call(attack, prng, actor, "burst", payer, app, plan)));
}

/** The same idempotency key and body again: the first answer, never a second charge. */
export async function replay(attack: Attack, prng: Prng, actor: number) {
  if (attack.idempotent.length === 0) return oneCall(attack, prng, actor, "blocking call", false);
  const first = prng.pick(attack.idempotent);
  await call(attack, prng, actor, "idempotent replay", first.payer, first.app, first.plan);
}
