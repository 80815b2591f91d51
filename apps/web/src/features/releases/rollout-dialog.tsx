import type { StartRollout } from "@promptmint/contracts";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { LinkedMessage } from "../../components/ui/linked-message";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import type { ExperimentSubject } from "./api/experiments";
import { useStartRollout } from "./api/rollouts";

/** What the form holds: text as typed, judged on submit. */
export interface RolloutForm {
  steps: string;
  stepMinutes: string;
  maxErrorPercent: string;
  maxLatencyMs: string;
  minMarginDollars: string;
  minOnlineScore: string;
  minCalls: string;
}

export const DEFAULT_ROLLOUT_FORM: RolloutForm = {
  steps: "5, 25, 100",
  stepMinutes: "60",
  maxErrorPercent: "5",
  maxLatencyMs: "",
  minMarginDollars: "",
  minOnlineScore: "",
  minCalls: "20",
};

type FormErrors = Partial<Record<keyof RolloutForm, string>>;

const blank = (text: string) => text.trim() === "";

/**
 * The form as the API's StartRollout (docs/decisions/077), or the problems by field. Said here as
 * the server says them, so a creator sees them before sending: steps whole percents, strictly
 * increasing, ending at 100, with at least one below it.
 */
export function parseRolloutForm(
  version: number,
  form: RolloutForm,
): { body: StartRollout; errors: null } | { body: null; errors: FormErrors } {
  const errors: FormErrors = {};
  const steps = form.steps
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((part) => Number(part.replace(/%$/, "")));
  if (steps.length < 2 || steps.length > 10 || steps.some((s) => !Number.isInteger(s) || s < 1 || s > 100))
    errors.steps = "Give 2 to 10 whole percents from 1 to 100, e.g. 5, 25, 100";
  else if (steps.some((s, i) => i > 0 && s <= (steps[i - 1] as number)))
    errors.steps = "Each step must be larger than the one before";
  else if (steps[steps.length - 1] !== 100) errors.steps = "The last step must be 100";

  const minutes = Number(form.stepMinutes);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 10_080)
    errors.stepMinutes = "Whole minutes from 1 to 10,080 (a week)";
  const minCalls = Number(form.minCalls);
  if (!Number.isInteger(minCalls) || minCalls < 1 || minCalls > 1_000_000)
    errors.minCalls = "Whole calls from 1 to 1,000,000";

  const bounds: StartRollout["bounds"] = { min_calls: minCalls };
  if (!blank(form.maxErrorPercent)) {
    const value = Number(form.maxErrorPercent);
    if (!Number.isFinite(value) || value < 0 || value > 100)
      errors.maxErrorPercent = "A percent from 0 to 100";
    else bounds.max_error_rate = value / 100;
  }
  if (!blank(form.maxLatencyMs)) {
    const value = Number(form.maxLatencyMs);
    if (!Number.isInteger(value) || value < 1 || value > 600_000)
      errors.maxLatencyMs = "Whole milliseconds from 1 to 600,000";
    else bounds.max_latency_p95_ms = value;
  }
  if (!blank(form.minMarginDollars)) {
    const value = Number(form.minMarginDollars.replace(/^\$/, ""));
    if (!Number.isFinite(value) || Math.abs(value) > 100)
      errors.minMarginDollars = "Dollars from -100 to 100";
    else bounds.min_margin_micros = Math.round(value * 1_000_000);
  }
  if (!blank(form.minOnlineScore)) {
    const value = Number(form.minOnlineScore);
    if (!Number.isFinite(value) || value < 0 || value > 1) errors.minOnlineScore = "A score from 0 to 1";
    else bounds.min_online_score = value;
  }
  if (Object.keys(errors).length > 0) return { body: null, errors };
  return { body: { version, steps, step_minutes: minutes, bounds }, errors: null };
}

/** The server's field names, as this form's. */
const SERVER_FIELDS: [RegExp, keyof RolloutForm][] = [
  [/^steps/, "steps"],
  [/^step_minutes/, "stepMinutes"],
  [/^bounds\.max_error_rate/, "maxErrorPercent"],
  [/^bounds\.max_latency_p95_ms/, "maxLatencyMs"],
  [/^bounds\.min_margin_micros/, "minMarginDollars"],
  [/^bounds\.min_online_score/, "minOnlineScore"],
  [/^bounds\.min_calls/, "minCalls"],
];

function serverErrors(error: unknown): FormErrors {
  const fields = error instanceof ApiClientError ? (error.fields ?? {}) : {};
  const errors: FormErrors = {};
  for (const [field, problem] of Object.entries(fields)) {
    const mine = SERVER_FIELDS.find(([pattern]) => pattern.test(field))?.[1];
    if (mine) errors[mine] = problem;
  }
  return errors;
}

/**
 * Starts a guarded rollout of `target`: its share of the callers who pin nothing grows by the
 * steps, each lasting at least its minutes and its calls, while it stays within the bounds; a
 * breach rolls it back by itself, and the last step promotes it.
 */
export function RolloutDialog({
  subject,
  target,
  production,
  open,
  onOpenChange,
  onStarted,
}: {
  subject: ExperimentSubject;
  target: number;
  production: number | null | undefined;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onStarted?: () => void;
}) {
  const start = useStartRollout(subject);
  const [form, setForm] = useState<RolloutForm>(DEFAULT_ROLLOUT_FORM);
  const [errors, setErrors] = useState<FormErrors>({});
  const close = (next: boolean) => {
    if (!next) {
      start.reset();
      setErrors({});
      setForm(DEFAULT_ROLLOUT_FORM);
    }
    onOpenChange(next);
  };
  const field = (key: keyof RolloutForm) => ({
    value: form[key],
    error: errors[key],
    onChange: (event: { target: { value: string } }) => setForm({ ...form, [key]: event.target.value }),
  });
  const submit = () => {
    const parsed = parseRolloutForm(target, form);
    setErrors(parsed.errors ?? {});
    if (!parsed.body) return;
    start.mutate(parsed.body, {
      onSuccess: (experiment) => {
        toast.success(`Rolling out v${target}: ${experiment.rollout?.percent ?? 0}% of callers to start`);
        close(false);
        onStarted?.();
      },
      onError: (error) => setErrors(serverErrors(error)),
    });
  };

  return (
    <ConfirmDialog
      open={open}
      onOpenChange={close}
      title={`Roll out v${target} gradually?`}
      description={
        <>
          Callers who do not pin a version move to <strong>v{target}</strong> step by step
          {production ? (
            <>
              {" "}
              from <strong>v{production}</strong>
            </>
          ) : null}
          . A step advances when its time is up, it has its calls and every bound holds; a breached bound
          returns everyone to v{production ?? "production"} by itself. The last step promotes v{target}.
        </>
      }
      confirmLabel="Start rollout"
      busyLabel="Starting..."
      confirmVariant="primary"
      busy={start.isPending}
      onConfirm={submit}
    >
      {/* Scrolls inside the dialog on a short screen (a phone at 390 px): its buttons stay in view. */}
      <form
        aria-label="Rollout settings"
        className="-mx-1 mt-4 max-h-[55vh] space-y-3 overflow-y-auto px-1 pb-1"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
        // Enter in any field starts it, as the dialog's button does (the button is outside the form).
        onKeyDown={(event) => {
          if (event.key !== "Enter" || !(event.target instanceof HTMLInputElement)) return;
          event.preventDefault();
          submit();
        }}
      >
        <TextField
          label={`Steps (% of callers on v${target})`}
          hint="Strictly increasing, ending at 100"
          inputMode="numeric"
          {...field("steps")}
        />
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
          <TextField label="Minutes per step" inputMode="numeric" {...field("stepMinutes")} />
          <TextField
            label="Minimum calls per step"
            hint="Before a step is judged or advances"
            inputMode="numeric"
            {...field("minCalls")}
          />
        </div>
        <fieldset className="space-y-3">
          <legend className="text-sm font-medium text-slate-900">Bounds (leave blank for none)</legend>
          <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
            <TextField label="Max error rate (%)" inputMode="decimal" {...field("maxErrorPercent")} />
            <TextField label="Max p95 latency (ms)" inputMode="numeric" {...field("maxLatencyMs")} />
            <TextField
              label="Min margin per call ($)"
              hint="What you keep per call, after fee and model cost"
              inputMode="decimal"
              {...field("minMarginDollars")}
            />
            <TextField
              label="Min online eval score (0–1)"
              hint="Judged when online evaluation scores calls"
              inputMode="decimal"
              {...field("minOnlineScore")}
            />
          </div>
        </fieldset>
        {start.isError && (
          <Alert tone="error">
            <LinkedMessage text={getErrorMessage(start.error)} />
          </Alert>
        )}
      </form>
    </ConfirmDialog>
  );
}

/**
 * The "Roll out gradually" choice beside a promotion: a button that opens the rollout dialog on
 * top of the promote dialog, which `onStarted` closes.
 */
export function RollOutGradually({
  subject,
  target,
  production,
  onStarted,
}: {
  subject: ExperimentSubject;
  target: number;
  production: number | null | undefined;
  onStarted?: () => void;
}) {
  const [open, setOpen] = useState(false);
  return (
    <div className="rounded-lg border border-slate-200 bg-slate-50 p-3 text-sm text-slate-600">
      <p>Or move callers to v{target} in steps (5% → 25% → 100%), rolled back by itself if it misbehaves.</p>
      <Button variant="secondary" size="sm" className="mt-2" onClick={() => setOpen(true)}>
        Roll out gradually
      </Button>
      <RolloutDialog
        subject={subject}
        target={target}
        production={production}
        open={open}
        onOpenChange={setOpen}
        onStarted={onStarted}
      />
    </div>
  );
}
