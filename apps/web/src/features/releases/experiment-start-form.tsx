import type { StickyBy } from "@promptmint/contracts";
import { FlaskConical, Plus, Trash2 } from "lucide-react";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { NumberField } from "../../components/ui/number-field";
import { SelectField } from "../../components/ui/select-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { type ExperimentSubject, useStartExperiment } from "./api/experiments";
import type { ArmVersion } from "./experiments-panel";

export interface ArmDraft {
  version: string;
  percent: string;
}

export function StartForm({
  subject,
  versions,
  production,
}: {
  subject: ExperimentSubject;
  versions: ArmVersion[];
  production: number;
}) {
  const start = useStartExperiment(subject);
  const workflow = subject.kind === "workflow";
  const other = versions.find((v) => v.version !== production)?.version ?? production;
  const [arms, setArms] = useState<ArmDraft[]>([
    { version: String(production), percent: "50" },
    { version: String(other), percent: "50" },
  ]);
  const [stickyBy, setStickyBy] = useState<"" | StickyBy>("");
  const [minCalls, setMinCalls] = useState("100");
  const [maxErrorRate, setMaxErrorRate] = useState("");
  const [minMargin, setMinMargin] = useState("");
  const [promoteAfter, setPromoteAfter] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const total = arms.reduce((sum, arm) => sum + (Number(arm.percent) || 0), 0);
  const options = versions.map((v) => ({
    value: String(v.version),
    label: `v${v.version}${v.labels.length ? ` (${v.labels.join(", ")})` : ""}${v.changelog ? ` · ${v.changelog}` : ""}`,
  }));

  if (versions.length < 2)
    return (
      <EmptyState
        icon={FlaskConical}
        title="One version so far"
        description={
          workflow
            ? "Save another provider configuration (another Dify, n8n, Flowise or webhook app) to get a second version, then split traffic between them here."
            : "Save a change to the prompt to get a second version, then split traffic between them here."
        }
      />
    );

  const setArm = (index: number, change: Partial<ArmDraft>) =>
    setArms((current) => current.map((arm, i) => (i === index ? { ...arm, ...change } : arm)));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (total !== 100) problems.arms = `Percents must sum to 100 (they sum to ${total})`;
    if (Object.keys(problems).length > 0) return setErrors(problems);
    setErrors({});
    start.mutate(
      {
        arms: arms.map((arm) => ({ version: Number(arm.version), percent: Number(arm.percent) })),
        sticky_by: stickyBy || null,
        rules: {
          min_calls: Number(minCalls) || 100,
          ...(maxErrorRate !== "" ? { max_error_rate: Number(maxErrorRate) / 100 } : {}),
          ...(minMargin !== "" ? { min_margin_micros: Math.round(Number(minMargin) * 1_000_000) } : {}),
          ...(promoteAfter !== "" ? { promote_winner_after_calls: Number(promoteAfter) } : {}),
        },
      },
      {
        onSuccess: () => toast.success("Experiment started"),
        onError: (error) =>
          setErrors(
            error instanceof ApiClientError && error.fields ? error.fields : { form: getErrorMessage(error) },
          ),
      },
    );
  };

  return (
    <Card>
      <CardHeader
        title="Start an experiment"
        description="Callers without a pinned version are split between the arms; each caller stays on one arm."
      />
      <CardBody>
        <form className="space-y-6" onSubmit={submit} noValidate>
          <fieldset className="space-y-3">
            <legend className="text-sm font-medium text-slate-900">Arms</legend>
            {arms.map((arm, index) => (
              <div
                // biome-ignore lint/suspicious/noArrayIndexKey: arms are edited in place, by position
                key={index}
                className="grid grid-cols-[1fr_auto] items-end gap-3 rounded-lg border border-slate-200 p-3 sm:grid-cols-[minmax(0,2fr)_minmax(0,3fr)_auto]"
              >
                <SelectField
                  label={`Arm ${index + 1} version`}
                  options={options}
                  value={arm.version}
                  error={errors[`arms.${index}.version`]}
                  onChange={(event) => setArm(index, { version: event.target.value })}
                />
                <div className="col-span-2 flex items-end gap-3 sm:col-span-1">
                  <input
                    type="range"
                    min={1}
                    max={99}
                    aria-label={`Arm ${index + 1} share slider`}
                    value={Number(arm.percent) || 1}
                    onChange={(event) => setArm(index, { percent: event.target.value })}
                    className="mb-3 w-full accent-brand-600"
                  />
                  <NumberField
                    label={`Arm ${index + 1} percent`}
                    min={1}
                    max={99}
                    step={1}
                    value={arm.percent}
                    onChange={(event) => setArm(index, { percent: event.target.value })}
                    className="w-24"
                  />
                </div>
                <Button
                  type="button"
                  variant="ghost"
                  size="sm"
                  aria-label={`Remove arm ${index + 1}`}
                  disabled={arms.length <= 2}
                  onClick={() => setArms((current) => current.filter((_, i) => i !== index))}
                  className="row-start-1 col-start-2 sm:row-auto sm:col-auto"
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            ))}
            <div className="flex flex-wrap items-center justify-between gap-3">
              <Button
                type="button"
                variant="secondary"
                size="sm"
                disabled={arms.length >= 5}
                onClick={() =>
                  setArms((current) => [
                    ...current,
                    { version: String(versions[0]?.version ?? 1), percent: "0" },
                  ])
                }
              >
                <Plus className="size-4" aria-hidden="true" />
                Add arm
              </Button>
              <p
                className={total === 100 ? "text-sm text-slate-500" : "text-sm font-medium text-red-600"}
                role="status"
              >
                Total {total}%{total === 100 ? "" : " (must be 100%)"}
              </p>
            </div>
            {errors.arms && <p className="text-sm text-red-600">{errors.arms}</p>}
          </fieldset>

          <div className="grid gap-4 sm:grid-cols-2">
            <SelectField
              label="Keep each caller on one arm by"
              options={[
                { value: "", label: "End user, else API key, else account" },
                { value: "end_user", label: "End user" },
                { value: "key", label: "API key" },
                { value: "account", label: "Account" },
              ]}
              value={stickyBy}
              onChange={(event) => setStickyBy(event.target.value as "" | StickyBy)}
            />
            <NumberField
              label="Calls per arm before judging"
              hint="No rule fires and no significance is shown before this."
              min={10}
              max={1_000_000}
              step={1}
              value={minCalls}
              error={errors["rules.min_calls"]}
              onChange={(event) => setMinCalls(event.target.value)}
            />
            <NumberField
              label="Roll back if an arm's error rate is above (%)"
              hint="Empty: no error rule."
              min={0}
              max={100}
              step={0.1}
              value={maxErrorRate}
              error={errors["rules.max_error_rate"]}
              onChange={(event) => setMaxErrorRate(event.target.value)}
            />
            <NumberField
              label="Roll back if an arm's margin per call is below ($)"
              hint={
                workflow
                  ? "Price less fee, per call (workflow calls have no model cost from us). Empty: no margin rule."
                  : "Price less fee and model cost, per call. Empty: no margin rule."
              }
              min={-100}
              max={100}
              step={0.0001}
              value={minMargin}
              error={errors["rules.min_margin_micros"]}
              onChange={(event) => setMinMargin(event.target.value)}
            />
            <NumberField
              label="Promote a significant winner after (calls per arm)"
              hint="Empty: never promote by itself."
              min={10}
              max={10_000_000}
              step={1}
              value={promoteAfter}
              error={errors["rules.promote_winner_after_calls"]}
              onChange={(event) => setPromoteAfter(event.target.value)}
            />
          </div>
          {errors.form && <Alert tone="error">{errors.form}</Alert>}
          <div className="flex justify-end">
            <Button type="submit" busy={start.isPending}>
              Start experiment
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
