import { useState } from "react";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { type ExperimentSubject, useExperiments } from "./api/experiments";
import { History } from "./experiment-history";
import { StartForm } from "./experiment-start-form";
import { ExperimentView } from "./experiment-view";

/** A version an arm may be: its number, labels and changelog (a prompt's or a workflow's). */
export interface ArmVersion {
  version: number;
  labels: string[];
  changelog: string;
}

/**
 * The experiments of one app: the running one with its figures (or the start form) and the past
 * ones. The same panel for a prompt app's page and a workflow app's Experiments tab; `versions`
 * undefined while they load.
 */
export function ExperimentsPanel({
  subject,
  production,
  versions,
}: {
  subject: ExperimentSubject;
  production: number;
  versions: ArmVersion[] | undefined;
}) {
  const list = useExperiments(subject);
  const [viewing, setViewing] = useState<string | null>(null);
  const running = list.data?.running ?? null;
  const past = (list.data?.experiments ?? []).filter((e) => e.status === "ended");
  const shown = viewing ? past.find((e) => e.id === viewing) : undefined;

  if (list.isError) return <ErrorBox message={getErrorMessage(list.error)} />;
  if (!list.data || !versions) return <LoadingState label="Loading experiments..." />;
  return (
    <div className="space-y-6">
      {running ? (
        <ExperimentView subject={subject} experiment={running} live />
      ) : (
        <StartForm subject={subject} versions={versions} production={production} />
      )}
      {shown && <ExperimentView subject={subject} experiment={shown} onClose={() => setViewing(null)} />}
      <History experiments={past} onView={setViewing} viewing={viewing} />
    </div>
  );
}
