import type { Application } from "@promptmint/contracts";
import { GitCompare, Rocket } from "lucide-react";
import { useState } from "react";
import { appPagePath, type ReleaseApp } from "../../lib/releases/app-ref";
import { useAppVersions } from "../../lib/releases/versions";
import { Badge } from "../ui/badge";
import { Button, ButtonLink } from "../ui/button";
import { PromoteDialog } from "./promote-dialog";
import { ExperimentRunningNote, useServingTruth } from "./serving-status";

/**
 * The editors' banner (prompt and workflow alike): what callers get, read from the serving
 * state, against what is being edited. While an experiment runs it names it and its split; while
 * the latest save is not production it offers to promote it, through the same dialog as the
 * Versions page (which asks whether to end a running experiment).
 */
export function ReleaseBanner({
  app,
  status,
  production,
  latest,
}: {
  app: ReleaseApp;
  status: Application["status"];
  production: number;
  latest: number;
}) {
  const [promoting, setPromoting] = useState(false);
  const truth = useServingTruth(app, production);
  const versions = useAppVersions(app);
  const target = versions.data?.find((version) => version.version === latest);
  const productionVersion = versions.data?.find((version) => version.version === production);
  const ahead = status === "live" && latest !== production;

  if (!ahead && !truth.experiment) {
    return (
      <p className="flex items-center gap-2 text-sm text-slate-600" data-testid="release-state">
        <Badge tone="green">production</Badge>
        Callers get v{production}, your latest save.
      </p>
    );
  }
  return (
    <section
      aria-label="Release"
      data-testid="release-state"
      className="flex flex-col gap-3 rounded-lg border border-amber-200 bg-amber-50 px-4 py-3 text-sm text-amber-900 sm:flex-row sm:items-center sm:justify-between"
    >
      <div className="min-w-0 space-y-1">
        {truth.experiment && <ExperimentRunningNote app={app} experiment={truth.experiment} />}
        {ahead ? (
          <>
            <p className="font-semibold">
              {truth.experiment ? "Production is" : "Callers get"} v{production}. You are editing v{latest}.
            </p>
            <p className="text-amber-800">
              Saving keeps your changes in new versions; callers get them only once you promote one.
            </p>
          </>
        ) : (
          <p className="text-amber-800">Production is v{production}, your latest save.</p>
        )}
      </div>
      <div className="flex shrink-0 flex-wrap gap-2">
        <ButtonLink to={appPagePath(app.kind, app.slug, "versions")} variant="secondary" size="sm">
          <GitCompare className="size-4" aria-hidden="true" />
          Compare
        </ButtonLink>
        {ahead && (
          <Button size="sm" onClick={() => setPromoting(true)} disabled={!target}>
            <Rocket className="size-4" aria-hidden="true" />
            Promote v{latest}
          </Button>
        )}
      </div>
      {promoting && target && (
        <PromoteDialog
          app={app}
          target={target}
          production={productionVersion}
          open
          onOpenChange={setPromoting}
        />
      )}
    </section>
  );
}
