import type { ArmComparison, ArmStats } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { applications, experiments } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { type EndRequest, endExperiment, experimentFigures } from "./experiments.service.ts";

type ExperimentRow = typeof experiments.$inferSelect;

/** How often the rules job looks at running experiments (app.ts). */
export const EXPERIMENT_RULES_INTERVAL_MS = 60_000;

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/**
 * What an experiment's rules decide from its figures, or nothing (a pure function, tested alone):
 * an arm above the error rate, or below the margin per call, after `min_calls` → roll back; after
 * `promote_winner_after_calls` calls on every arm, an arm significantly better than the control on
 * margin per call (or, margins alike, on success) and no arm better than it → promoted. The control
 * wins when every other arm is significantly worse. Never a winner without significance.
 */
export function ruleDecision(
  experiment: Pick<ExperimentRow, "rules" | "controlVersion">,
  arms: ArmStats[],
  comparisons: ArmComparison[],
): Omit<EndRequest, "actorId"> | null {
  const { rules } = experiment;
  for (const arm of arms) {
    if (arm.calls < rules.min_calls) continue;
    const errorRate = arm.errors / arm.calls;
    if (rules.max_error_rate !== undefined && errorRate > rules.max_error_rate)
      return {
        outcome: "rolled_back",
        reason: `Rule: v${arm.version}'s error rate ${percent(errorRate)} is above ${percent(rules.max_error_rate)} after ${arm.calls} calls`,
      };
    const marginPerCall = arm.margin_micros / arm.calls;
    if (rules.min_margin_micros !== undefined && marginPerCall < rules.min_margin_micros)
      return {
        outcome: "rolled_back",
        reason: `Rule: v${arm.version}'s margin per call ${Math.round(marginPerCall)} µ$ is below ${rules.min_margin_micros} µ$ after ${arm.calls} calls`,
      };
  }
  const after = rules.promote_winner_after_calls;
  if (after === undefined || arms.some((arm) => arm.calls < after)) return null;
  const better = comparisons.filter((c) => c.verdict === "better");
  if (better.length > 0) {
    const margin = (version: number) => {
      const arm = arms.find((a) => a.version === version);
      return arm && arm.calls > 0 ? arm.margin_micros / arm.calls : 0;
    };
    const winner = better.reduce((best, c) => (margin(c.version) > margin(best.version) ? c : best));
    return {
      outcome: "promoted",
      version: winner.version,
      reason: `Rule: v${winner.version} beat v${winner.control_version} after ${after} calls per arm (${describeTest(winner)})`,
    };
  }
  if (comparisons.length > 0 && comparisons.every((c) => c.verdict === "worse"))
    return {
      outcome: "promoted",
      version: experiment.controlVersion,
      reason: `Rule: v${experiment.controlVersion} (the control) beat every other arm after ${after} calls per arm`,
    };
  return null;
}

function describeTest(c: ArmComparison): string {
  if (c.margin_per_call && c.margin_per_call.p_value < 0.05)
    return `margin per call ${c.margin_per_call.difference >= 0 ? "+" : ""}${Math.round(c.margin_per_call.difference)} µ$, p=${c.margin_per_call.p_value.toPrecision(2)}`;
  if (c.success_rate)
    return `success rate ${c.success_rate.difference >= 0 ? "+" : ""}${percent(c.success_rate.difference)}, p=${c.success_rate.p_value.toPrecision(2)}`;
  return "significant";
}

/**
 * The job (app.ts, every minute): each running experiment's rules, judged on its figures; an end
 * they decide is made by endExperiment as a creator's would be (production moved through
 * promoteVersion, audited). A promotion the price guard refuses ends the experiment as stopped,
 * saying why. Answers the experiments it ended.
 */
export async function runExperimentRules(
  db: Database,
  { feePercent }: { feePercent: number },
): Promise<number> {
  const running = await db
    .select({ experiment: experiments, app: applications })
    .from(experiments)
    .innerJoin(applications, eq(applications.id, experiments.applicationId))
    .where(eq(experiments.status, "running"));
  let ended = 0;
  for (const { experiment, app } of running) {
    const { arms, comparisons } = await experimentFigures(db, experiment);
    const decision = ruleDecision(experiment, arms, comparisons);
    if (!decision) continue;
    try {
      await endExperiment(db, app, experiment, { ...decision, actorId: null }, { feePercent });
      ended += 1;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === "conflict") continue; // ended meanwhile, by the creator or another process
      await endExperiment(
        db,
        app,
        experiment,
        { outcome: "stopped", reason: `${decision.reason}; not promoted: ${error.message}`, actorId: null },
        { feePercent },
      ).catch((again: unknown) => {
        if (!(again instanceof AppError && again.code === "conflict")) throw again;
      });
      ended += 1;
    }
  }
  return ended;
}
