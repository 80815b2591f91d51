import type { ConfigSchema } from "@promptmint/contracts";
import { FieldFrame, FieldMessages, useFieldDescription } from "../../components/ui/field-message";
import { inputClasses } from "../../components/ui/text-field";
import { cn } from "../../lib/cn";
import {
  type ConfigProperty,
  isMaskedProperty,
  isRequiredProperty,
  type ProviderFieldValues,
  type WorkflowEditorErrors,
} from "./workflow-editor-values";

/** The form a provider's config_schema describes: one labelled control per property. */
export function ProviderConfigFields({
  schema,
  values,
  errors,
  onChange,
}: {
  schema: ConfigSchema;
  values: ProviderFieldValues;
  errors: WorkflowEditorErrors;
  onChange: (key: string, value: string | boolean) => void;
}) {
  const entries = Object.entries(schema.properties);
  if (entries.length === 0) {
    return (
      <p className="rounded-lg border border-dashed border-slate-300 px-4 py-6 text-center text-sm text-slate-500">
        No configuration schema available
      </p>
    );
  }
  return (
    <div className="grid gap-5 md:grid-cols-2">
      {entries.map(([key, property]) => (
        <ProviderConfigField
          key={key}
          name={key}
          property={property}
          required={isRequiredProperty(schema, key)}
          value={values[key] ?? (property.type === "boolean" ? false : "")}
          error={errors[`provider_config.${key}`]}
          onChange={(value) => onChange(key, value)}
        />
      ))}
    </div>
  );
}

function inputTypeOf(property: ConfigProperty): string {
  if (isMaskedProperty(property)) return "password";
  if (property.type === "number") return "number";
  return property.format === "uri" ? "url" : "text";
}

function RequiredMark() {
  return (
    <span className="ml-0.5 text-red-600" aria-hidden="true">
      *
    </span>
  );
}

function ProviderConfigField({
  name,
  property,
  required,
  value,
  error,
  onChange,
}: {
  name: string;
  property: ConfigProperty;
  required: boolean;
  value: string | boolean;
  error?: string;
  onChange: (value: string | boolean) => void;
}) {
  const hint = property.description || undefined;
  const field = useFieldDescription(undefined, hint, error);
  const { controlId, hintId, errorId, controlProps } = field;

  if (property.type === "boolean") {
    return (
      <div className="space-y-1.5 md:col-span-2">
        <div className="flex items-center gap-2">
          <input
            type="checkbox"
            name={name}
            checked={value === true}
            onChange={(event) => onChange(event.target.checked)}
            className="size-4 rounded border-slate-300 accent-brand-600 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600"
            {...controlProps}
          />
          <label htmlFor={controlId} className="text-sm font-medium text-slate-700">
            {property.title}
            {required && <RequiredMark />}
          </label>
        </div>
        <FieldMessages hint={hint} hintId={hintId} error={error} errorId={errorId} />
      </div>
    );
  }

  const text = typeof value === "string" ? value : "";
  const masked = isMaskedProperty(property);
  // A long URL or key reads better across the whole row.
  const wide = property.format === "uri" || masked;
  return (
    <FieldFrame
      field={field}
      label={
        <>
          {property.title}
          {required && <RequiredMark />}
        </>
      }
      hint={hint}
      error={error}
      className={cn(wide && "md:col-span-2")}
    >
      {property.enum ? (
        <select
          name={name}
          value={text}
          required={required}
          onChange={(event) => onChange(event.target.value)}
          className={cn(inputClasses, "pr-8")}
          {...controlProps}
        >
          {(!required || !property.enum.includes(text)) && <option value="">Select...</option>}
          {property.enum.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      ) : (
        <input
          name={name}
          type={inputTypeOf(property)}
          inputMode={property.type === "number" ? "decimal" : undefined}
          autoComplete={masked ? "new-password" : "off"}
          spellCheck={false}
          placeholder={property.format === "uri" ? "https://..." : undefined}
          value={text}
          required={required}
          onChange={(event) => onChange(event.target.value)}
          className={inputClasses}
          {...controlProps}
        />
      )}
    </FieldFrame>
  );
}
