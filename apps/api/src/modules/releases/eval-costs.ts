import type { EvalEstimate } from "@promptmint/contracts";
import { and, count, eq, gt, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { evalRuns } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { walletBalance } from "../billing/balances.ts";
import { modelCostRefusal } from "../billing/call-payment/model-cost-holds.ts";
import { formatMicros } from "../billing/money.ts";

/**
 * What an eval run may cost, and who may start one (issue 37, docs/decisions/062). Every case and
 * judge call of a run is the owner's own call and holds its worst-case model cost from their
 * wallet as it runs (billing/call-payment/model-cost-holds.ts); this bounds the run as a whole
 * before its first call: a per-account limit of runs at once, a 402 when the wallet cannot pay
 * even the first call, and an explicit confirmation of the estimate when it is large.
 */

/** Runs one account may have running at once (the attack started four at once). */
export const MAX_CONCURRENT_EVAL_RUNS = 2;
/** A run still `running` this long after its start was lost to a crash: it no longer counts. */
const RUN_COUNTS_FOR_MS = 60 * 60 * 1000;
/** Above this estimate (or above the wallet) a run starts only with `confirm_cost_micros` (1 dollar). */
export const CONFIRM_ABOVE_MICROS = 1_000_000;

/** One case as the estimate needs it: its inputs and the rubrics the judge will read. */
export interface EstimatedCase {
  inputs: Record<string, unknown>;
  query: string | null;
  rubrics: string[];
}

/** The worst case of each call of a run (the gateway's: gateway/eval-call.ts). */
export interface RunCostBound {
  /** Every case call and judge call at its worst case. */
  totalMicros: number;
  /** The dearest single call: a wallet below it cannot pay the run's first call. */
  largestCallMicros: number;
  calls: number;
  judgeCalls: number;
}

export type EstimateRun = (cases: EstimatedCase[], judgeModel: string | null) => Promise<RunCostBound>;

/** The estimate as the API answers it (`GET …/evals/estimate`, and before a run starts). */
export async function evalEstimate(
  db: Database,
  owner: LocalUser,
  bound: RunCostBound,
): Promise<EvalEstimate> {
  const balance = await walletBalance(db, owner.id);
  return {
    estimate_micros: bound.totalMicros,
    largest_call_micros: bound.largestCallMicros,
    calls: bound.calls,
    judge_calls: bound.judgeCalls,
    balance_micros: balance,
    confirm_above_micros: CONFIRM_ABOVE_MICROS,
    needs_confirmation: bound.totalMicros > CONFIRM_ABOVE_MICROS || bound.totalMicros > balance,
    max_concurrent_runs: MAX_CONCURRENT_EVAL_RUNS,
  };
}

/**
 * Refuses a run before anything is called: 402 (with the top-up link) when the wallet cannot pay
 * even its dearest call, 409 naming `confirm_cost_micros` when the estimate needs confirming and
 * the request did not confirm at least the estimate.
 */
export function refuseUnaffordableRun(
  estimate: EvalEstimate,
  confirmCostMicros: number | undefined,
  topUpUrl: string,
) {
  if (estimate.largest_call_micros > 0 && estimate.balance_micros < estimate.largest_call_micros)
    throw modelCostRefusal(estimate.largest_call_micros, estimate.balance_micros, topUpUrl);
  if (estimate.needs_confirmation && (confirmCostMicros ?? -1) < estimate.estimate_micros)
    throw new AppError(
      "conflict",
      `This run may cost up to ${formatMicros(estimate.estimate_micros)} in model costs, paid from your wallet (${formatMicros(estimate.balance_micros)} available); confirm it by sending confirm_cost_micros of at least ${estimate.estimate_micros}`,
      {
        fields: {
          confirm_cost_micros: `must be at least ${estimate.estimate_micros} (this run's estimate) to start it`,
        },
      },
    );
}

/**
 * Starts a run's row unless the owner already has MAX_CONCURRENT_EVAL_RUNS running (429 naming
 * the limit). The count and the insert are one transaction under a lock on the owner's row, so
 * two requests on two processes cannot both pass the count.
 */
export async function startRunWithinLimit<T>(
  db: Database,
  owner: LocalUser,
  insert: (tx: Database) => Promise<T>,
): Promise<T> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await t.execute(sql`select id from users where id = ${owner.id} for update`);
    const [running] = await t
      .select({ n: count() })
      .from(evalRuns)
      .where(
        and(
          eq(evalRuns.startedBy, owner.id),
          eq(evalRuns.status, "running"),
          gt(evalRuns.startedAt, new Date(Date.now() - RUN_COUNTS_FOR_MS)),
        ),
      );
    if ((running?.n ?? 0) >= MAX_CONCURRENT_EVAL_RUNS)
      throw new AppError(
        "rate_limited",
        `At most ${MAX_CONCURRENT_EVAL_RUNS} eval runs at a time per account: wait for one to finish`,
        { headers: { "retry-after": "30" } },
      );
    return insert(t);
  });
}
