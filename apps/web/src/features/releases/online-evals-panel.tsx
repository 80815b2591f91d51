import {
  type EvalAssertion,
  type EvalAssertionKind,
  MAX_ONLINE_EVAL_ASSERTIONS,
  type OnlineEvalSettings,
  type OnlineEvalSummary,
} from "@promptmint/contracts";
import { Activity, Plus, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { SwitchField } from "../../components/ui/switch-field";
import { SignedMicrosCell, Table } from "../../components/ui/table";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatPercent, MICROS_PER_CENT } from "../../lib/format";
import { type OnlineEvalSubject, useOnlineEvals, useSaveOnlineEvals } from "./api/online-evals";
import { AssertionFields } from "./eval-assertion-fields";
import { ASSERTION_KINDS, newAssertion } from "./eval-assertions";

/**
 * Online evals (docs/decisions/076) on the app's Evals page: a share of the app's customer calls
 * judged by assertions after they are answered; rubric judges are paid from the creator's wallet,
 * at most a daily cap. Scores per version and experiment arm beside revenue and margin.
 */
export function OnlineEvalsPanel({ subject }: { subject: OnlineEvalSubject }) {
  const summary = useOnlineEvals(subject);
  return (
    <Card>
      <CardHeader
        title="Online evals"
        description="Judge a share of your customers' live calls by assertions. Rubric judges are your own calls, paid from your wallet up to a daily cap; your customers pay nothing more."
      />
      {summary.isPending ? (
        <CardBody>
          <LoadingState label="Loading online evals..." />
        </CardBody>
      ) : summary.isError || !summary.data ? (
        <CardBody>
          <ErrorBox message={getErrorMessage(summary.error)} />
        </CardBody>
      ) : (
        <OnlineEvals key={JSON.stringify(summary.data.settings)} subject={subject} summary={summary.data} />
      )}
    </Card>
  );
}

const DEFAULTS: OnlineEvalSettings = {
  enabled: false,
  sample_percent: 5,
  assertions: [{ kind: "rubric", rubric: "" }],
  daily_cap_cents: 100,
};

function OnlineEvals({ subject, summary }: { subject: OnlineEvalSubject; summary: OnlineEvalSummary }) {
  const save = useSaveOnlineEvals(subject);
  const initial = summary.settings ?? DEFAULTS;
  const [enabled, setEnabled] = useState(initial.enabled);
  const [percent, setPercent] = useState(String(initial.sample_percent));
  const [capDollars, setCapDollars] = useState((initial.daily_cap_cents / 100).toFixed(2));
  const [assertions, setAssertions] = useState<EvalAssertion[]>(initial.assertions);
  const fields = save.error instanceof ApiClientError ? (save.error.fields ?? {}) : {};
  const capCents = Math.round(Number(capDollars) * 100);
  const capMicros = (summary.settings?.daily_cap_cents ?? 0) * MICROS_PER_CENT;
  const change = (index: number, next: EvalAssertion) =>
    setAssertions((all) => all.map((a, i) => (i === index ? next : a)));
  const submit = () =>
    save.mutate(
      {
        enabled,
        sample_percent: Number(percent),
        assertions,
        daily_cap_cents: Number.isFinite(capCents) ? capCents : -1,
      },
      { onSuccess: () => toast.success(enabled ? "Online evals on" : "Online evals saved (off)") },
    );
  const fieldErrors = Object.entries(fields)
    .filter(([key]) => !key.startsWith("assertions.") && !["sample_percent", "daily_cap_cents"].includes(key))
    .map(([key, problem]) => `${key} ${problem}`);

  return (
    <>
      <CardBody className="space-y-5 border-b border-slate-100">
        <form
          className="space-y-4"
          aria-label="Online eval settings"
          onSubmit={(event) => {
            event.preventDefault();
            submit();
          }}
        >
          <SwitchField
            label="Judge live calls"
            description="Only your customers' calls are sampled: never your own calls, Test Prompt or eval runs."
            checked={enabled}
            onChange={setEnabled}
          />
          <div className="grid gap-3 sm:grid-cols-2">
            <TextField
              label="Sample (% of customer calls)"
              inputMode="decimal"
              value={percent}
              error={fields.sample_percent}
              hint="From 0.1 to 100"
              onChange={(e) => setPercent(e.target.value)}
            />
            <TextField
              label="Daily cap (USD)"
              inputMode="decimal"
              value={capDollars}
              error={fields.daily_cap_cents}
              hint="The most rubric judges may cost your wallet a UTC day"
              onChange={(e) => setCapDollars(e.target.value)}
            />
          </div>
          <fieldset className="space-y-3">
            <legend className="text-sm font-medium text-slate-700">Assertions</legend>
            {fields.assertions && <Alert tone="error">{`assertions ${fields.assertions}`}</Alert>}
            <ol className="space-y-3">
              {assertions.map((assertion, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: assertions have no id of their own
                <li key={index} className="rounded-lg border border-slate-200 bg-white p-3">
                  <div className="flex flex-col gap-3 sm:flex-row sm:items-end">
                    <SelectField
                      label={`Online assertion ${index + 1}`}
                      className="sm:w-64"
                      options={ASSERTION_KINDS}
                      value={assertion.kind}
                      onChange={(e) => change(index, newAssertion(e.target.value as EvalAssertionKind))}
                    />
                    <div className="min-w-0 flex-1">
                      <AssertionFields
                        assertion={assertion}
                        error={
                          Object.entries(fields).find(([key]) => key.startsWith(`assertions.${index}`))?.[1]
                        }
                        onChange={(next) => change(index, next)}
                      />
                    </div>
                    <Button
                      variant="ghost"
                      size="sm"
                      aria-label={`Remove online assertion ${index + 1}`}
                      onClick={() => setAssertions((all) => all.filter((_, i) => i !== index))}
                    >
                      <Trash2 className="size-4" aria-hidden="true" />
                    </Button>
                  </div>
                </li>
              ))}
            </ol>
            <Button
              variant="secondary"
              size="sm"
              onClick={() => setAssertions((all) => [...all, newAssertion("contains")])}
              disabled={assertions.length >= MAX_ONLINE_EVAL_ASSERTIONS}
            >
              <Plus className="size-4" aria-hidden="true" /> Add online assertion
            </Button>
          </fieldset>
          {save.isError && (fieldErrors.length > 0 || Object.keys(fields).length === 0) && (
            <Alert tone="error">
              {fieldErrors.length > 0 ? fieldErrors.join("; ") : getErrorMessage(save.error)}
            </Alert>
          )}
          <div className="flex justify-end">
            <Button type="submit" busy={save.isPending}>
              Save online evals
            </Button>
          </div>
        </form>
      </CardBody>
      <CardBody className="space-y-4">
        <section aria-label="Today's spend" className="text-sm text-slate-700">
          Today's judge spend: <Money micros={summary.spent_today_micros} /> of <Money micros={capMicros} />{" "}
          {summary.cap_reached && <Badge tone="yellow">cap reached: judges wait for tomorrow</Badge>}
        </section>
        <VersionTable summary={summary} />
        <Recent summary={summary} />
      </CardBody>
    </>
  );
}

const rate = (value: number | null) => (value === null ? "—" : formatPercent(value * 100));

function VersionTable({ summary }: { summary: OnlineEvalSummary }) {
  if (summary.versions.length === 0)
    return (
      <EmptyState
        framed={false}
        icon={Activity}
        title="No live calls judged yet"
        description="Once online evals are on, sampled customer calls show here per version and experiment arm."
      />
    );
  return (
    // Scrolls sideways on a narrow screen (390 px) rather than squeezing the figures.
    <div className="relative overflow-x-auto">
      <Table
        caption="Online eval scores per version"
        columns={[
          { label: "Version" },
          { label: "Scored", className: "text-right" },
          { label: "Pass rate", className: "text-right" },
          { label: "Mean score", className: "text-right" },
          { label: "Eval cost", className: "text-right" },
          { label: "Revenue", className: "text-right" },
          { label: "Margin", className: "text-right" },
        ]}
      >
        {summary.versions.map((row) => (
          <tr key={`${row.version}:${row.experiment_id ?? ""}`}>
            <td className="px-3 py-3 text-sm font-medium whitespace-nowrap text-slate-900">
              v{row.version}
              {row.experiment_id && <span className="block text-xs text-slate-500">experiment arm</span>}
            </td>
            <td className="px-3 py-3 text-right text-sm tabular-nums">{row.scored_calls}</td>
            <td className="px-3 py-3 text-right text-sm tabular-nums">{rate(row.pass_rate)}</td>
            <td className="px-3 py-3 text-right text-sm tabular-nums">
              {row.mean_score === null ? "—" : row.mean_score.toFixed(2)}
            </td>
            <td className="px-3 py-3 text-right text-sm tabular-nums">
              <Money micros={row.eval_cost_micros} />
            </td>
            <td className="px-3 py-3 text-right text-sm tabular-nums">
              <Money micros={row.revenue_micros} />
            </td>
            <SignedMicrosCell micros={row.margin_micros} />
          </tr>
        ))}
      </Table>
    </div>
  );
}

function Recent({ summary }: { summary: OnlineEvalSummary }) {
  if (summary.recent.length === 0) return null;
  return (
    <section aria-label="Recent online results">
      <h3 className="mb-2 text-sm font-semibold text-slate-900">Recent results</h3>
      <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200">
        {summary.recent.map((r) => (
          <li key={r.invocation_id} className="flex flex-wrap items-center gap-2 px-3 py-2 text-sm">
            <Badge tone={r.passed ? "green" : "red"}>{r.passed ? "pass" : "fail"}</Badge>
            <span className="font-medium text-slate-900">v{r.version}</span>
            {r.score !== null && (
              <span className="text-slate-500 tabular-nums">score {r.score.toFixed(2)}</span>
            )}
            <span className="ml-auto text-xs text-slate-500">{formatDateTime(r.created_at)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
