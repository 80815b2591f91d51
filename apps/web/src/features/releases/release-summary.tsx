import type { Application } from "@promptmint/contracts";
import { Rocket, RotateCcw } from "lucide-react";
import type { ReactNode } from "react";
import { ServingStatus, useServingTruth } from "../../components/releases/serving-status";
import { Button } from "../../components/ui/button";
import type { ReleaseApp } from "../../lib/releases/app-ref";
import type { PrimaryAction } from "../../lib/releases/release-actions";
import { type AppVersion, versionEngine } from "../../lib/releases/versions";

/**
 * The Versions page's header: what callers get (production, or the running experiment's split,
 * read from the serving state), what was saved since, and exactly one primary action (promote the
 * latest, or roll back; see `primaryAction`). `rolloutSlot` holds more actions beside it.
 */
export function ReleaseSummary({
  app,
  application,
  production,
  productionVersion,
  latest,
  action,
  onAction,
  rolloutSlot,
}: {
  app: ReleaseApp;
  application: Application;
  production: number;
  productionVersion: AppVersion | undefined;
  latest: AppVersion | undefined;
  action: PrimaryAction;
  onAction: (action: NonNullable<PrimaryAction>) => void;
  rolloutSlot?: ReactNode;
}) {
  const truth = useServingTruth(app, production);
  const ahead = latest && latest.version !== production;
  return (
    <section
      aria-label="Release"
      className="flex flex-col gap-4 rounded-xl border border-slate-200 bg-white p-5 shadow-sm shadow-slate-900/5 md:flex-row md:items-center md:justify-between"
    >
      <div className="min-w-0 space-y-1">
        <ServingStatus
          app={app}
          fallback={production}
          detail={productionVersion ? versionEngine(productionVersion) : undefined}
        />
        <p className="text-sm text-slate-600">
          {ahead ? (
            <>
              You saved <strong>v{latest.version}</strong> since; callers do not get it until you promote it.
            </>
          ) : truth.experiment ? (
            "The latest version is production; the experiment decides what each caller gets until it ends."
          ) : application.status === "live" ? (
            "The latest version is in production."
          ) : (
            "This app is a draft: every save goes to production (nobody calls it yet)."
          )}
        </p>
      </div>
      <div className="flex flex-wrap gap-2" data-slot="release-actions">
        {action?.kind === "rollback" && (
          <Button variant="secondary" onClick={() => onAction(action)}>
            <RotateCcw className="size-4" aria-hidden="true" />
            Roll back to v{action.version}
          </Button>
        )}
        {action?.kind === "promote" && (
          <Button onClick={() => onAction(action)}>
            <Rocket className="size-4" aria-hidden="true" />
            Promote v{action.version}
          </Button>
        )}
        {rolloutSlot}
      </div>
    </section>
  );
}
