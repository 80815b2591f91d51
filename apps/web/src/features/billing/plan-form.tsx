import { CreatePackageSchema, type Package } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { planChangeNotice } from "../../components/billing/plan-features";
import { Alert } from "../../components/ui/alert";
import { CancelSubmitButtons } from "../../components/ui/button";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatPlanTerms } from "../../lib/format";
import type { CreatePackageBody } from "./api/save-package";

interface PlanFormValues {
  name: string;
  /** Dollars, as typed. */
  price: string;
  included_calls: string;
  description: string;
  /** One `key: value` per line. */
  features: string;
  is_active: boolean;
}

/** The plan's price and included calls: number inputs of at least 1, side by side. */
const AMOUNT_FIELDS = [
  {
    name: "price",
    label: "Price (USD per period)",
    inputMode: "decimal",
    step: 0.01,
    placeholder: "5.00",
    hint: "At least $1.00",
  },
  {
    name: "included_calls",
    label: "Included calls",
    inputMode: "numeric",
    step: 1,
    placeholder: "1000",
    hint: "Per period; further calls are paid per call",
  },
] as const;

type PlanFormErrors = Partial<Record<keyof PlanFormValues, string>>;

const NEW_PLAN: PlanFormValues = {
  name: "",
  price: "",
  included_calls: "",
  description: "",
  features: "",
  is_active: true,
};

function valuesOf(plan: Package | null): PlanFormValues {
  if (!plan) return NEW_PLAN;
  return {
    name: plan.name,
    // The terms the creator has set (an announced change, if any): saving other fields keeps it.
    price: ((plan.pending_terms?.price_cents ?? plan.price_cents) / 100).toFixed(2),
    included_calls: String(plan.pending_terms?.included_calls ?? plan.included_calls),
    description: plan.description,
    features: Object.entries(plan.features)
      .map(([key, value]) => `${key}: ${value}`)
      .join("\n"),
    is_active: plan.is_active,
  };
}

/** `key: value` lines → the features map; blank lines are dropped. */
export function parseFeatureLines(text: string): { features: Record<string, string>; error?: string } {
  const features: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return { features, error: `Write each feature as 'key: value' ("${line}")` };
    features[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { features };
}

const FIELD_OF: Record<string, keyof PlanFormValues> = {
  name: "name",
  price_cents: "price",
  included_calls: "included_calls",
  description: "description",
  features: "features",
  is_active: "is_active",
};

const LABELS: Partial<Record<keyof PlanFormValues, string>> = {
  name: "Name",
  price: "Price",
  included_calls: "Included calls",
};

/** The form values as the API's plan body (price in cents), or what is wrong with them. */
function parsePlanForm(values: PlanFormValues): { body?: CreatePackageBody; errors: PlanFormErrors } {
  const errors: PlanFormErrors = {};
  const price = values.price.trim() === "" ? Number.NaN : Number(values.price);
  if (Number.isNaN(price)) errors.price = "Price is required";
  const calls = values.included_calls.trim() === "" ? Number.NaN : Number(values.included_calls);
  if (Number.isNaN(calls)) errors.included_calls = "Included calls is required";
  const features = parseFeatureLines(values.features);
  if (features.error) errors.features = features.error;

  const body: CreatePackageBody = {
    name: values.name.trim(),
    price_cents: Math.round(price * 100),
    currency: "usd",
    description: values.description.trim(),
    features: features.features,
    included_calls: calls,
    is_active: values.is_active,
  };
  const result = CreatePackageSchema.safeParse(body);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const field = FIELD_OF[String(issue.path[0])];
      if (field && !errors[field]) errors[field] = `${LABELS[field] ?? "This field"} ${issue.message}`;
    }
  }
  return Object.keys(errors).length > 0 ? { errors } : { body, errors };
}

export function PlanForm({
  plan,
  busy,
  error,
  onSubmit,
  onCancel,
}: {
  plan: Package | null;
  busy: boolean;
  error: Error | null;
  onSubmit: (body: CreatePackageBody) => void;
  onCancel: () => void;
}) {
  const [values, setValues] = useState(() => valuesOf(plan));
  const [errors, setErrors] = useState<PlanFormErrors>({});
  const set = (field: keyof PlanFormValues) => (event: { target: { value: string } }) =>
    setValues({ ...values, [field]: event.target.value });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parsePlanForm(values);
    setErrors(parsed.errors);
    if (parsed.body) onSubmit(parsed.body);
  };

  const serverFields = error instanceof ApiClientError ? (error.fields ?? {}) : {};
  const fieldError = (field: keyof PlanFormValues) =>
    errors[field] ??
    Object.entries(serverFields).find(([path]) => FIELD_OF[path] === field)?.[1] ??
    undefined;

  // A refusal about a field is said once, under that field; only others get the banner.
  const refusedField = Object.keys(serverFields).some((path) => FIELD_OF[path] !== undefined);

  return (
    <form onSubmit={submit} noValidate className="space-y-5">
      {error && !refusedField && (
        <Alert tone="error" title="Failed to save plan">
          {getErrorMessage(error)}
        </Alert>
      )}
      <TextField
        label="Plan name"
        placeholder="Pro"
        maxLength={100}
        required
        value={values.name}
        error={fieldError("name")}
        disabled={busy}
        onChange={set("name")}
      />
      <div className="grid gap-5 sm:grid-cols-2">
        {AMOUNT_FIELDS.map(({ name, ...field }) => (
          <TextField
            key={name}
            {...field}
            type="number"
            min={1}
            required
            value={values[name]}
            error={fieldError(name)}
            disabled={busy}
            onChange={set(name)}
          />
        ))}
      </div>
      {plan && (
        <p className="text-xs text-slate-500">
          {plan.pending_terms
            ? `Announced: ${planChangeNotice(plan)}. Until then subscribers get ${formatPlanTerms(plan)}. `
            : ""}
          A higher price or fewer included calls reaches subscribers only at their first renewal after the
          notice period; a lower price or more calls applies from their next renewal.
        </p>
      )}
      <TextareaField
        label="Description"
        rows={2}
        maxLength={1000}
        value={values.description}
        error={fieldError("description")}
        disabled={busy}
        onChange={set("description")}
      />
      <TextareaField
        label="Features"
        rows={4}
        placeholder={"Support: Email\nSLA: 99.9%"}
        value={values.features}
        error={fieldError("features")}
        hint="One per line, as 'key: value'"
        disabled={busy}
        onChange={set("features")}
      />
      <CheckboxField
        label="Active (offered to subscribers)"
        checked={values.is_active}
        disabled={busy}
        onChange={(event) => setValues({ ...values, is_active: event.target.checked })}
      />
      <CancelSubmitButtons
        busy={busy}
        onCancel={onCancel}
        label={plan ? "Save Plan" : "Create Plan"}
        busyLabel="Saving..."
      />
    </form>
  );
}
