import {
  type AppType,
  type CreateApplication,
  type InteractionMode,
  MIN_PRICE_CENTS,
  type StarterPrice,
  type Visibility,
} from "@promptmint/contracts";
import { useCallback, useEffect, useRef } from "react";
import { type FieldErrors, type Resolver, useForm } from "react-hook-form";
import { useNavigate } from "react-router";
import { Alert } from "../../components/ui/alert";
import { VISIBILITY_OPTIONS } from "../../components/ui/basic-settings-fields";
import { Button, ButtonLink } from "../../components/ui/button";
import { centsOfEntry, PriceField } from "../../components/ui/price-field";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents } from "../../lib/format";
import { registeredField } from "../../lib/registered-field";
import { useCreateApplication } from "./api/create-application";
import { useStarterPrice } from "./api/get-starter-price";
import { APP_TYPE_OPTIONS, INTERACTION_MODE_OPTIONS } from "./application-options";

interface CreateApplicationFormValues {
  name: string;
  description: string;
  type: AppType;
  interaction_mode: InteractionMode;
  visibility: Visibility;
  price_cents: number;
  app_id: string;
  api_key: string;
}
type FormField = keyof CreateApplicationFormValues;

/** The price guard's floor for a new prompt app, as the server gives it (GET /prompt-apps/starter/). */
export type StarterFloor = Pick<StarterPrice, "min_price_cents" | "message"> | undefined;

/**
 * SPEC §5: name, price of at least 1 cent, and a workflow's provider credentials; a prompt app's
 * price at least the starter model's floor (issue 32), refused with the server's own sentence.
 */
export function validateCreateApplication(
  values: CreateApplicationFormValues,
  floor: StarterFloor,
): FieldErrors<CreateApplicationFormValues> {
  const errors: FieldErrors<CreateApplicationFormValues> = {};
  const fail = (field: FormField, message: string) => {
    errors[field] = { type: "validate", message };
  };
  if (values.name.trim() === "") fail("name", "Application name is required");
  if (!Number.isInteger(values.price_cents) || values.price_cents < MIN_PRICE_CENTS) {
    fail("price_cents", "Price must be at least 1 cent");
  } else if (
    values.type === "prompt" &&
    floor?.min_price_cents != null &&
    floor.message &&
    values.price_cents < floor.min_price_cents
  ) {
    fail("price_cents", floor.message);
  }
  if (values.type === "workflow") {
    if (values.app_id.trim() === "") fail("app_id", "App ID is required");
    if (values.api_key.trim() === "") fail("api_key", "API Key is required");
  }
  return errors;
}

/** SPEC §9 defaults. */
function defaultValuesFor(type: AppType): CreateApplicationFormValues {
  return {
    name: "",
    description: "",
    type,
    interaction_mode: "completion",
    visibility: "private",
    price_cents: 100,
    app_id: "",
    api_key: "",
  };
}

/** SPEC §7: interaction mode only for prompt apps, the provider's credentials only for workflows. */
export function createRequestOf(values: CreateApplicationFormValues): CreateApplication {
  const common = {
    name: values.name.trim(),
    description: values.description,
    type: values.type,
    visibility: values.visibility,
    price_cents: values.price_cents,
  };
  if (values.type === "workflow") {
    return { ...common, provider_config: { app_id: values.app_id.trim(), api_key: values.api_key.trim() } };
  }
  return { ...common, interaction_mode: values.interaction_mode };
}

const SERVER_FIELDS: Record<string, FormField> = {
  name: "name",
  description: "description",
  type: "type",
  interaction_mode: "interaction_mode",
  visibility: "visibility",
  price_cents: "price_cents",
  "provider_config.app_id": "app_id",
  "provider_config.api_key": "api_key",
};

export function CreateApplicationForm({
  initialType,
  onTypeChange,
}: {
  initialType: AppType;
  /** The type chosen in the form, for the page's badge. */
  onTypeChange?: (type: AppType) => void;
}) {
  const navigate = useNavigate();
  const create = useCreateApplication();
  const starter = useStarterPrice();
  // The resolver reads the floor when the form is validated, whenever it arrived.
  const floor = useRef<StarterFloor>(undefined);
  floor.current = starter.data;
  const resolver: Resolver<CreateApplicationFormValues> = useCallback((values) => {
    const errors = validateCreateApplication(values, floor.current);
    return Object.keys(errors).length > 0 ? { values: {}, errors } : { values, errors: {} };
  }, []);
  const form = useForm<CreateApplicationFormValues>({
    resolver,
    defaultValues: defaultValuesFor(initialType),
  });
  const { handleSubmit, setError, watch } = form;
  const field = registeredField(form);
  const type = watch("type");
  const visibility = watch("visibility");
  const priceCents = watch("price_cents");
  useEffect(() => onTypeChange?.(type), [type, onTypeChange]);

  const onSubmit = handleSubmit((values) => {
    create.mutate(createRequestOf(values), {
      onSuccess: (application) => navigate(`/applications/${application.slug}`),
      onError: (error) => {
        if (!(error instanceof ApiClientError) || !error.fields) return;
        for (const [path, message] of Object.entries(error.fields)) {
          const field = SERVER_FIELDS[path];
          if (field) setError(field, { type: "server", message });
        }
      },
    });
  });

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-6">
      {create.isError && <Alert tone="error">{getErrorMessage(create.error)}</Alert>}

      <TextField
        label="Application Name"
        required
        placeholder="My AI Assistant"
        hint="This name is used to generate your API endpoint URL."
        {...field("name")}
      />
      <TextareaField
        label="Description"
        rows={3}
        placeholder="Describe what your application does..."
        {...field("description")}
      />
      <div className="grid gap-5 sm:grid-cols-2">
        <SelectField label="Application Type" required options={APP_TYPE_OPTIONS} {...field("type")} />
        {type === "prompt" && (
          <SelectField
            label="Interaction Mode"
            required
            options={INTERACTION_MODE_OPTIONS}
            {...field("interaction_mode")}
          />
        )}
        <SelectField
          label="Visibility"
          required
          options={VISIBILITY_OPTIONS}
          hint={visibilityHint(visibility)}
          {...field("visibility")}
        />
      </div>
      <Alert tone="info" title="Who can call it">
        A new application starts as a Draft. Only you can call a private or draft app (your own calls are
        free); anyone else is told it was not found. To let others call it and pay, make it Public (or Embed)
        and set it Live from its page.
      </Alert>

      {type === "workflow" && (
        <fieldset className="space-y-5 rounded-lg border border-slate-200 bg-slate-50/60 p-4">
          <legend className="px-1 text-sm font-semibold text-slate-900">Workflow Provider</legend>
          <TextField
            label="App ID"
            required
            autoComplete="off"
            placeholder="The workflow's app id at the provider"
            {...field("app_id")}
          />
          <TextField
            label="API Key"
            type="password"
            required
            autoComplete="new-password"
            placeholder="The provider's API key"
            hint="Stored encrypted; only its last 4 characters are ever shown."
            {...field("api_key")}
          />
        </fieldset>
      )}

      <PriceField
        unit="cents"
        label="Price per API Call (cents)"
        min={MIN_PRICE_CENTS}
        required
        amount={Number.isFinite(priceCents) ? priceCents : 0}
        note={type === "prompt" ? starterFloorNote(starter.data) : null}
        error={form.formState.errors.price_cents?.message}
        {...form.register("price_cents", { setValueAs: centsOfEntry })}
      />

      <div className="flex flex-col-reverse gap-3 border-t border-slate-100 pt-5 sm:flex-row sm:justify-end">
        <ButtonLink to="/applications" variant="secondary">
          Cancel
        </ButtonLink>
        <Button type="submit" busy={create.isPending}>
          {create.isPending ? "Creating..." : "Create Application"}
        </Button>
      </div>
    </form>
  );
}

/** What the chosen visibility means for callers, once the app is Live (issue 42). */
export function visibilityHint(visibility: Visibility): string {
  if (visibility === "private") return "Only you can call a private or draft app.";
  if (visibility === "public") return "Listed in Explore; anyone signed in can call it once it is Live.";
  return "Listed in Explore and embeddable in other websites; anyone can call it once it is Live.";
}

/** "At least $0.07 per call for the starter model (gpt4)": the floor, where the price is typed. */
export function starterFloorNote(starter: StarterPrice | undefined): string | null {
  if (!starter || starter.min_price_cents === null) return null;
  return `At least ${formatCents(starter.min_price_cents)} per call for the starter model (${starter.model})`;
}
