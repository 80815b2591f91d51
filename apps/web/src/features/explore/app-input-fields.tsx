import { allowedValueText, type IoSchema, type SchemaProperty } from "@promptmint/contracts";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";

/** Longer strings than this get a text area rather than a one-line input. */
const ONE_LINE_MAX_LENGTH = 256;

export type InputTexts = Record<string, string>;

/**
 * The values a call sends for what was typed: numbers and booleans as such, arrays and objects
 * parsed from JSON (a problem per field that is not), empty fields left out so defaults apply.
 */
export function inputValuesOf(
  schema: IoSchema,
  texts: InputTexts,
): { values: Record<string, unknown>; problems: Record<string, string> } {
  const values: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const text = texts[name] ?? "";
    if (property.type === "boolean") {
      if (text !== "") values[name] = text === "true";
      continue;
    }
    if (text.trim() === "") continue;
    if (property.type === "number" || property.type === "integer") values[name] = Number(text);
    else if (property.type === "array" || property.type === "object") {
      try {
        values[name] = JSON.parse(text);
      } catch {
        problems[name] = `must be JSON (${property.type === "array" ? "[…]" : "{…}"})`;
      }
    } else values[name] = text;
  }
  return { values, problems };
}

function labelOf(name: string, property: SchemaProperty, required: boolean) {
  return `${property.description || name}${required ? " *" : ""}`;
}

/** One control per declared input, chosen by its type, allowed values and length. */
export function AppInputFields({
  schema,
  texts,
  errors,
  onChange,
}: {
  schema: IoSchema;
  texts: InputTexts;
  errors: Record<string, string>;
  onChange(name: string, text: string): void;
}) {
  return (
    <>
      {Object.entries(schema.properties).map(([name, property]) => {
        const required = schema.required.includes(name);
        const common = {
          label: labelOf(name, property, required),
          name,
          error: errors[name],
          hint: property.description ? `${name} (${property.type})` : property.type,
        };
        const text = texts[name] ?? "";
        if (property.type === "boolean")
          return (
            <CheckboxField
              key={name}
              label={common.label}
              name={name}
              checked={text === "true"}
              onChange={(event) => onChange(name, String(event.target.checked))}
            />
          );
        if (property.enum?.length)
          return (
            <SelectField
              key={name}
              {...common}
              options={[
                { value: "", label: required ? "Choose…" : "No value" },
                ...property.enum.map((option) => ({
                  value: allowedValueText(option),
                  label: allowedValueText(option),
                })),
              ]}
              value={text}
              onChange={(event) => onChange(name, event.target.value)}
            />
          );
        if (property.type === "number" || property.type === "integer")
          return (
            <TextField
              key={name}
              {...common}
              type="number"
              step={property.type === "integer" ? 1 : "any"}
              min={property.minimum}
              max={property.maximum}
              value={text}
              onChange={(event) => onChange(name, event.target.value)}
            />
          );
        const oneLine =
          property.type === "string" &&
          property.maxLength !== undefined &&
          property.maxLength <= ONE_LINE_MAX_LENGTH;
        return oneLine ? (
          <TextField
            key={name}
            {...common}
            maxLength={property.maxLength}
            value={text}
            onChange={(event) => onChange(name, event.target.value)}
          />
        ) : (
          <TextareaField
            key={name}
            {...common}
            rows={3}
            value={text}
            onChange={(event) => onChange(name, event.target.value)}
          />
        );
      })}
    </>
  );
}
