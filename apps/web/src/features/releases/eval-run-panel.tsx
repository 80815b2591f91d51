import type { EvalRun } from "@promptmint/contracts";
import { FlaskConical } from "lucide-react";
import { useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { useModelCatalog } from "../../lib/models-query";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useAppVersions } from "../../lib/releases/versions";
import { useEvalEstimate, useStartEvalRun } from "./api/evals";
import { ConfirmEvalRunCost, EvalRunEstimate } from "./eval-run-estimate";

export function RunPanel({
  app,
  latest,
  caseCount,
  onRan,
}: {
  app: ReleaseAppId;
  /** The latest saved version: what a run picks first. */
  latest: number;
  caseCount: number;
  onRan: (run: EvalRun) => void;
}) {
  const versions = useAppVersions(app);
  const models = useModelCatalog();
  const start = useStartEvalRun(app);
  const [version, setVersion] = useState(String(latest));
  const [judge, setJudge] = useState("");
  const [confirming, setConfirming] = useState(false);
  const estimate = useEvalEstimate(app, Number(version), judge, caseCount > 0);
  const run = (confirmCostMicros?: number) => {
    setConfirming(false);
    start.mutate(
      {
        version: Number(version),
        ...(judge ? { judge_model: judge } : {}),
        ...(confirmCostMicros !== undefined ? { confirm_cost_micros: confirmCostMicros } : {}),
      },
      { onSuccess: (ran) => onRan(ran) },
    );
  };
  const versionOptions = (versions.data ?? [{ version: latest, labels: ["latest"] }]).map((v) => ({
    value: String(v.version),
    label: `v${v.version}${v.labels.length ? ` (${v.labels.join(", ")})` : ""}`,
  }));
  const judgeOptions = [
    { value: "", label: app.kind === "prompt" ? "The version's own model" : "The default judge" },
    ...(models.data?.models ?? []).map((m) => ({ value: m.id, label: m.label })),
  ];
  return (
    <Card>
      <CardHeader
        title="Run the evals"
        description={
          app.kind === "prompt"
            ? "Every case runs on the version's model, two at a time. Each call is your own call of your app: no price, its model cost paid from your wallet. At most two runs at a time."
            : "Every case calls the version's workflow provider, two at a time. Each call is your own call of your app: no price; a rubric's judge is paid from your wallet. At most two runs at a time."
        }
      />
      <CardBody className="space-y-4">
        <div className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
          <SelectField
            label="Version"
            options={versionOptions}
            value={version}
            onChange={(e) => setVersion(e.target.value)}
          />
          <SelectField
            label="Judge model (for rubrics)"
            options={judgeOptions}
            value={judge}
            onChange={(e) => setJudge(e.target.value)}
          />
          <Button
            busy={start.isPending}
            disabled={caseCount === 0}
            onClick={() => (estimate.data?.needs_confirmation ? setConfirming(true) : run())}
          >
            <FlaskConical className="size-4" aria-hidden="true" /> Run on v{version}
          </Button>
        </div>
        {start.isPending && (
          <LoadingState label={`Running ${caseCount} case${caseCount === 1 ? "" : "s"} on v${version}...`} />
        )}
        {estimate.data && <EvalRunEstimate estimate={estimate.data} />}
        {confirming && estimate.data && (
          <ConfirmEvalRunCost
            estimate={estimate.data}
            onConfirm={run}
            onCancel={() => setConfirming(false)}
          />
        )}
        {caseCount === 0 && <p className="text-sm text-slate-500">Add a test case to run the evals.</p>}
        {start.isError && <Alert tone="error">{getErrorMessage(start.error)}</Alert>}
      </CardBody>
    </Card>
  );
}
