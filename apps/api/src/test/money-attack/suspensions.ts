import { type Caller, callerAt } from "../caller.ts";
import { type Attack, journalEvent, pickNode } from "./attack.ts";
import { operatorOf } from "./chargebacks.ts";
import type { Node } from "./cluster.ts";
import type { CallEntry } from "./journal.ts";
import type { Prng } from "./prng.ts";

/**
 * The operator suspends a consumer in the middle of their calls (through the admin API of one
 * process) and lifts it a few seconds later (through either). Decision 046: from the moment the
 * suspension is visible, no call of theirs is answered or charged, on any process.
 */

/** How long after the operator's answer every process must refuse the suspended payer (the change feed's delivery, decision 040). */
export const SUSPENSION_VISIBLE_MS = 1_000;

export interface SuspensionWindow {
  payerId: string;
  payer: string;
  /** The suspend request's answer arrived (200) at this moment. */
  answeredAt: number;
  /** The unsuspend was sent at this moment (calls after it may be served again); none: never lifted. */
  liftSentAt?: number;
}

const state = new WeakMap<Attack, { operator?: Caller; windows: SuspensionWindow[]; busy: boolean }>();

function stateOf(attack: Attack) {
  let found = state.get(attack);
  if (!found) {
    found = { windows: [], busy: false };
    state.set(attack, found);
  }
  return found;
}

/** The suspensions the attack made, for the judge. */
export const suspensionWindows = (attack: Attack): SuspensionWindow[] => stateOf(attack).windows;

export async function suspendConsumer(attack: Attack, prng: Prng, actor: number) {
  const own = stateOf(attack);
  // One at a time, and none in the last stretch (every suspension is lifted before the end).
  if (own.busy || attack.endsAt - Date.now() < 15_000) return;
  own.busy = true;
  try {
    // Through the issuer's process (PUBLIC_URL); a kill there makes it wait for the next turn.
    own.operator ??= await operatorOf(attack).catch(() => undefined);
    if (!own.operator) return;
    const operator = own.operator;
    const payer = prng.pick(attack.world.consumers);
    const via = (node: Node) => callerAt(node.baseUrl, operator);
    const path = (on: boolean) => `/api/admin/users/${payer.id}/${on ? "suspend" : "unsuspend"}`;
    const body = { reason: "money attack: suspended mid-stream" };
    let window: SuspensionWindow | undefined;
    await journalEvent(attack, actor, "suspend", async () => {
      const answer = await via(pickNode(attack, prng)).api("POST", path(true), { body });
      if (answer.status === 200) {
        window = { payerId: payer.id, payer: payer.name, answeredAt: Date.now() };
        own.windows.push(window);
      }
      return { status: answer.status, detail: { payer: payer.name, body: answer.body } };
    });
    // A kill may have cut the answer off after the commit: lift it all the same.
    await new Promise((resolve) => setTimeout(resolve, prng.int(3_000, 8_000)));
    await journalEvent(attack, actor, "unsuspend", async () => {
      for (let attempt = 1; ; attempt++) {
        if (window) window.liftSentAt = Date.now();
        const answer = await via(pickNode(attack, prng))
          .api("POST", path(false), { body })
          .catch(() => ({ status: 0, body: undefined }));
        if (answer.status === 200 || attempt >= 5)
          return { status: answer.status, detail: { payer: payer.name, attempts: attempt } };
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    });
  } finally {
    own.busy = false;
  }
}

/** An invocation as the judge reads it (judge.ts InvocationRow, the fields needed here). */
interface ChargedRow {
  id: string;
  caller_user_id: string | null;
  status: string;
  charged_cents: number;
  hold_id: string | null;
  subscription_id: string | null;
  started_ms: number;
}

/**
 * From a suspension's visibility (its answer plus the feed's delivery) until its lift was sent, the
 * payer's calls get no answer and no charge: no delivered call started in the window, no charged
 * invocation of theirs started in it.
 */
export function judgeSuspensions(
  windows: SuspensionWindow[],
  calls: CallEntry[],
  invocations: ChargedRow[],
  delivered: (call: CallEntry) => boolean,
  flag: (kind: string, example: string) => void,
) {
  for (const window of windows) {
    const from = window.answeredAt + SUSPENSION_VISIBLE_MS;
    const until = window.liftSentAt ?? Number.POSITIVE_INFINITY;
    const inside = (at: number) => at >= from && at <= until;
    for (const call of calls)
      if (call.payerId === window.payerId && inside(call.startedAt) && delivered(call))
        flag(
          "answered a suspended payer",
          `#${call.seq} ${window.payer} on ${call.node} → ${call.status}, ${call.startedAt - window.answeredAt} ms after the suspension`,
        );
    for (const row of invocations) {
      const charged = row.hold_id !== null || row.subscription_id !== null || row.charged_cents > 0;
      if (row.caller_user_id === window.payerId && charged && inside(row.started_ms))
        flag(
          "charged a suspended payer",
          `invocation ${row.id} (${row.status}, ${row.charged_cents}¢) ${row.started_ms - window.answeredAt} ms after the suspension`,
        );
    }
  }
}

/** The calls refused as suspended while a window was open, for the summary. */
export const suspendedRefusals = (calls: CallEntry[]) =>
  calls.filter((call) => call.status === 403 && call.errorCode === "account_suspended").length;
