import { FlaskConical, Rocket } from "lucide-react";
import { Link } from "react-router";
import { appPagePath, type ReleaseApp } from "../../lib/releases/app-ref";
import {
  experimentRunningText,
  rolloutText,
  type ServingExperiment,
  useServing,
} from "../../lib/releases/serving";
import { Badge } from "../ui/badge";

/**
 * What callers who pin nothing get, read from `GET {base}/serving` (docs/decisions/079):
 * production's version, and the running experiment (its split; a rollout's percent and next step)
 * when there is one. `fallback` is production as the page already knows it, shown while the
 * serving state loads or if it cannot be read.
 */
export function useServingTruth(app: Pick<ReleaseApp, "kind" | "id">, fallback: number | null) {
  const serving = useServing(app);
  return {
    production: serving.data ? serving.data.production_version : fallback,
    experiment: serving.data?.experiment ?? null,
    /** False while loading, or when the serving state could not be read (then no experiment is claimed). */
    known: serving.isSuccess,
  };
}

/** The experiment part of the truth: `Experiment running: v1 50% · v2 50% — callers are split`, and a rollout's step. */
export function ExperimentRunningNote({
  app,
  experiment,
}: {
  app: ReleaseApp;
  experiment: ServingExperiment;
}) {
  return (
    <span className="block space-y-0.5" data-testid="experiment-running">
      <span className="flex flex-wrap items-center gap-2">
        <FlaskConical className="size-4 shrink-0 text-amber-600" aria-hidden="true" />
        <strong>{experimentRunningText(experiment)}</strong>
        <Link
          to={appPagePath(app.kind, app.slug, "experiments")}
          className="text-brand-700 underline-offset-2 hover:underline"
        >
          {experiment.rollout ? "See the rollout" : "See the experiment"}
        </Link>
      </span>
      {experiment.rollout && <span className="block text-slate-600">{rolloutText(experiment.rollout)}</span>}
    </span>
  );
}

/**
 * One line of truth for a page header or a banner: `Callers get v3`, or, while an experiment
 * runs, its split (and a rollout's step).
 */
export function ServingStatus({
  app,
  fallback,
  detail,
}: {
  app: ReleaseApp;
  fallback: number | null;
  /** What production runs (its model or provider), after its number. */
  detail?: string;
}) {
  const { production, experiment } = useServingTruth(app, fallback);
  return (
    <div className="min-w-0 space-y-1 text-sm text-slate-900" data-testid="serving-status">
      <p className="flex flex-wrap items-center gap-2">
        <Badge tone="green">
          <Rocket className="size-3" aria-hidden="true" />
          production
        </Badge>
        <span>
          {experiment ? "Production is " : "Callers get "}
          <strong>v{production ?? "?"}</strong>
          {detail && <span className="text-slate-500"> · {detail}</span>}
        </span>
      </p>
      {experiment && <ExperimentRunningNote app={app} experiment={experiment} />}
    </div>
  );
}
