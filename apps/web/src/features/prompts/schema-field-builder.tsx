import type { SchemaFieldType } from "@promptmint/contracts";
import { ArrowDown, ArrowUp, Trash2 } from "lucide-react";
import { useId } from "react";
import { Button } from "../../components/ui/button";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import {
  allowedValueType,
  fieldNameProblemOf,
  newSchemaField,
  SCHEMA_FIELD_TYPES,
  type SchemaField,
  schemaOf,
} from "./schema-fields";

const TYPE_OPTIONS = SCHEMA_FIELD_TYPES.map((type) => ({ value: type, label: type }));
const BOOLEAN_DEFAULT_OPTIONS = [
  { value: "", label: "No default" },
  { value: "true", label: "True" },
  { value: "false", label: "False" },
];

/** What one line of Allowed Values is for each type (an array's lines are its items' values). */
const ALLOWED_VALUE_LINE: Record<SchemaFieldType, string> = {
  string: "One value per line",
  number: "One number per line",
  integer: "One whole number per line",
  boolean: "true or false, one per line",
  array: "One JSON array per line",
  object: 'One JSON object per line, e.g. {"size": "S"}',
};

function allowedValuesHint(field: SchemaField): string {
  const line = ALLOWED_VALUE_LINE[allowedValueType(field)];
  const scope = field.type === "array" ? " (each item must be one of them)" : "";
  return `${line}${scope}; leave empty to allow any value.`;
}

const iconButton =
  "inline-flex size-8 items-center justify-center rounded-md text-slate-500 transition-colors hover:bg-slate-100 hover:text-slate-900 disabled:cursor-not-allowed disabled:opacity-40 disabled:hover:bg-transparent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600";

/** SPEC §2 "Schema field builder": edits a list of fields and shows the schema they make. */
export function SchemaFieldBuilder({
  title,
  description,
  fields,
  onChange,
}: {
  title: string;
  description?: string;
  fields: readonly SchemaField[];
  onChange: (fields: SchemaField[]) => void;
}) {
  const headingId = useId();
  const update = (id: string, changes: Partial<SchemaField>) =>
    onChange(fields.map((field) => (field.id === id ? { ...field, ...changes } : field)));
  const move = (index: number, offset: -1 | 1) => {
    const next = [...fields];
    const [field] = next.splice(index, 1);
    if (!field) return;
    next.splice(index + offset, 0, field);
    onChange(next);
  };

  return (
    <section aria-labelledby={headingId} className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h3 id={headingId} className="text-base font-semibold text-slate-900">
            {title}
          </h3>
          {description && <p className="mt-1 text-sm text-slate-500">{description}</p>}
        </div>
        <Button variant="secondary" size="sm" onClick={() => onChange([...fields, newSchemaField()])}>
          + Add Field
        </Button>
      </div>

      {fields.length === 0 ? (
        <p className="rounded-lg border border-dashed border-slate-300 px-4 py-6 text-center text-sm text-slate-500">
          No fields defined yet. Click "Add Field" to get started.
        </p>
      ) : (
        <ol className="space-y-4">
          {fields.map((field, index) => (
            <li key={field.id}>
              <SchemaFieldRow
                field={field}
                position={index + 1}
                nameProblem={fieldNameProblemOf(field, fields)}
                isFirst={index === 0}
                isLast={index === fields.length - 1}
                onChange={(changes) => update(field.id, changes)}
                onMove={(offset) => move(index, offset)}
                onDelete={() => onChange(fields.filter((other) => other.id !== field.id))}
              />
            </li>
          ))}
        </ol>
      )}

      <figure aria-label={`${title}: Generated Schema Preview`}>
        <figcaption className="mb-2 text-sm font-medium text-slate-700">Generated Schema Preview</figcaption>
        <pre className="max-h-72 overflow-auto rounded-lg bg-slate-900 p-4 font-mono text-xs leading-relaxed text-slate-100">
          {JSON.stringify(schemaOf(fields), null, 2)}
        </pre>
      </figure>
    </section>
  );
}

const LENGTH_LIMITS = [
  { key: "minLength", label: "Min Length" },
  { key: "maxLength", label: "Max Length" },
] as const;

const VALUE_LIMITS = [
  { key: "minimum", label: "Minimum" },
  { key: "maximum", label: "Maximum" },
] as const;

function SchemaFieldRow({
  field,
  position,
  nameProblem,
  isFirst,
  isLast,
  onChange,
  onMove,
  onDelete,
}: {
  field: SchemaField;
  position: number;
  nameProblem: string | undefined;
  isFirst: boolean;
  isLast: boolean;
  onChange: (changes: Partial<SchemaField>) => void;
  onMove: (offset: -1 | 1) => void;
  onDelete: () => void;
}) {
  const label = field.name.trim() || `field ${position}`;
  const isNumeric = field.type === "number" || field.type === "integer";

  return (
    <fieldset className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <legend className="sr-only">{`Field ${position}: ${label}`}</legend>
      <div className="flex flex-wrap items-end gap-3">
        <TextField
          label="Field Name"
          className="min-w-40 flex-1"
          value={field.name}
          placeholder="e.g. topic"
          autoComplete="off"
          spellCheck={false}
          error={nameProblem}
          onChange={(event) => onChange({ name: event.target.value })}
        />
        <SelectField
          label="Type"
          className="w-36"
          options={TYPE_OPTIONS}
          value={field.type}
          onChange={(event) => onChange({ type: event.target.value as SchemaFieldType, defaultValue: "" })}
        />
        <CheckboxField
          label="Required"
          className="h-10"
          checked={field.required}
          onChange={(event) => onChange({ required: event.target.checked })}
        />
        <div className="ml-auto flex h-10 items-center gap-1">
          <button
            type="button"
            className={iconButton}
            disabled={isFirst}
            aria-label={`Move ${label} up`}
            onClick={() => onMove(-1)}
          >
            <ArrowUp className="size-4" aria-hidden="true" />
          </button>
          <button
            type="button"
            className={iconButton}
            disabled={isLast}
            aria-label={`Move ${label} down`}
            onClick={() => onMove(1)}
          >
            <ArrowDown className="size-4" aria-hidden="true" />
          </button>
          <button
            type="button"
            className={`${iconButton} hover:bg-red-50 hover:text-red-600`}
            aria-label={`Delete ${label}`}
            onClick={onDelete}
          >
            <Trash2 className="size-4" aria-hidden="true" />
          </button>
        </div>
      </div>

      <TextField
        label="Description"
        className="mt-3"
        value={field.description}
        placeholder="What this field is for"
        onChange={(event) => onChange({ description: event.target.value })}
      />

      <div className="mt-3 grid gap-3 sm:grid-cols-3">
        {field.type === "string" && (
          <>
            {LENGTH_LIMITS.map(({ key, label }) => (
              <TextField
                key={key}
                label={label}
                type="number"
                min={0}
                step={1}
                value={field[key]}
                onChange={(event) => onChange({ [key]: event.target.value })}
              />
            ))}
            <TextField
              label="Pattern (Regex)"
              value={field.pattern}
              spellCheck={false}
              placeholder="^[a-z]+$"
              onChange={(event) => onChange({ pattern: event.target.value })}
            />
          </>
        )}
        {isNumeric &&
          VALUE_LIMITS.map(({ key, label }) => (
            <TextField
              key={key}
              label={label}
              type="number"
              step="any"
              value={field[key]}
              onChange={(event) => onChange({ [key]: event.target.value })}
            />
          ))}
        {field.type === "array" && (
          <SelectField
            label="Item Type"
            options={TYPE_OPTIONS}
            value={field.itemsType}
            onChange={(event) => onChange({ itemsType: event.target.value as SchemaFieldType })}
          />
        )}
        {field.type === "boolean" ? (
          <SelectField
            label="Default Value"
            options={BOOLEAN_DEFAULT_OPTIONS}
            value={field.defaultValue}
            onChange={(event) => onChange({ defaultValue: event.target.value })}
          />
        ) : (
          <TextField
            label="Default Value"
            type={isNumeric ? "number" : "text"}
            step={isNumeric ? "any" : undefined}
            value={field.defaultValue}
            placeholder={
              field.type === "array" ? '["a", "b"]' : field.type === "object" ? '{"key": "value"}' : ""
            }
            onChange={(event) => onChange({ defaultValue: event.target.value })}
          />
        )}
      </div>

      <TextareaField
        label="Allowed Values"
        className="mt-3"
        rows={3}
        hint={allowedValuesHint(field)}
        value={field.allowedValues}
        onChange={(event) => onChange({ allowedValues: event.target.value })}
      />
    </fieldset>
  );
}
