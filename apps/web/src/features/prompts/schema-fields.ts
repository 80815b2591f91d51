import type { IoSchema, SchemaFieldType, SchemaProperty } from "@promptmint/contracts";
import { VARIABLE_NAME_PATTERN } from "./template-variables";

export const SCHEMA_FIELD_TYPES: readonly SchemaFieldType[] = [
  "string",
  "number",
  "integer",
  "boolean",
  "array",
  "object",
];

/** One row of the schema field builder; number-like entries stay text until the schema is built. */
export interface SchemaField {
  id: string;
  name: string;
  type: SchemaFieldType;
  required: boolean;
  description: string;
  minLength: string;
  maxLength: string;
  pattern: string;
  minimum: string;
  maximum: string;
  /** Text of the default; for booleans "", "true" or "false". */
  defaultValue: string;
  /** Allowed values, one per line. */
  allowedValues: string;
  /** The type of an array's items. */
  itemsType: SchemaFieldType;
}

let nextFieldId = 0;
function newFieldId(): string {
  nextFieldId += 1;
  return `field-${nextFieldId}`;
}

export function newSchemaField(overrides: Partial<SchemaField> = {}): SchemaField {
  return {
    id: newFieldId(),
    name: "",
    type: "string",
    required: false,
    description: "",
    minLength: "",
    maxLength: "",
    pattern: "",
    minimum: "",
    maximum: "",
    defaultValue: "",
    allowedValues: "",
    itemsType: "string",
    ...overrides,
  };
}

/** Allowed values apply to scalar text and numbers; booleans, arrays and objects have none. */
export function hasAllowedValues(type: SchemaFieldType): boolean {
  return type === "string" || type === "number" || type === "integer";
}

function numberOf(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function lengthOf(text: string): number | undefined {
  const value = numberOf(text);
  return value !== undefined && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function defaultOf(field: SchemaField): unknown {
  const text = field.defaultValue;
  switch (field.type) {
    case "string":
      return text === "" ? undefined : text;
    case "number":
    case "integer":
      return numberOf(text);
    case "boolean":
      return text === "true" ? true : text === "false" ? false : undefined;
    case "array":
    case "object": {
      if (text.trim() === "") return undefined;
      try {
        const value = JSON.parse(text) as unknown;
        const isArray = Array.isArray(value);
        const fits =
          field.type === "array" ? isArray : typeof value === "object" && value !== null && !isArray;
        return fits ? value : undefined;
      } catch {
        return undefined;
      }
    }
  }
}

/** SPEC §5: allowed values are the lines, trimmed, blanks dropped (numbers for numeric fields). */
export function allowedValuesOf(field: SchemaField): (string | number)[] {
  const lines = field.allowedValues
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (field.type === "number" || field.type === "integer") {
    return lines.map((line) => numberOf(line)).filter((value): value is number => value !== undefined);
  }
  return lines;
}

export function propertyOf(field: SchemaField): SchemaProperty {
  const property: SchemaProperty = { type: field.type };
  const description = field.description.trim();
  if (description) property.description = description;
  if (field.type === "string") {
    const minLength = lengthOf(field.minLength);
    const maxLength = lengthOf(field.maxLength);
    if (minLength !== undefined) property.minLength = minLength;
    if (maxLength !== undefined) property.maxLength = maxLength;
    if (field.pattern !== "") property.pattern = field.pattern;
  }
  if (field.type === "number" || field.type === "integer") {
    const minimum = numberOf(field.minimum);
    const maximum = numberOf(field.maximum);
    if (minimum !== undefined) property.minimum = minimum;
    if (maximum !== undefined) property.maximum = maximum;
  }
  if (field.type === "array") property.items = { type: field.itemsType };
  const defaultValue = defaultOf(field);
  if (defaultValue !== undefined) property.default = defaultValue;
  if (hasAllowedValues(field.type)) {
    const allowed = allowedValuesOf(field);
    if (allowed.length > 0) property.enum = allowed;
  }
  return property;
}

/** The IoSchema the fields describe; fields without a name are left out. */
export function schemaOf(fields: readonly SchemaField[]): IoSchema {
  const named = fields.filter((field) => field.name.trim() !== "");
  return {
    type: "object",
    properties: Object.fromEntries(named.map((field) => [field.name.trim(), propertyOf(field)])),
    required: named.filter((field) => field.required).map((field) => field.name.trim()),
    additionalProperties: false,
  };
}

function textOf(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** The builder rows of a saved schema (null or empty gives none). */
export function fieldsOf(schema: IoSchema | null | undefined): SchemaField[] {
  if (!schema) return [];
  return Object.entries(schema.properties).map(([name, property]) =>
    newSchemaField({
      name,
      type: property.type,
      required: schema.required.includes(name),
      description: property.description ?? "",
      minLength: property.minLength === undefined ? "" : String(property.minLength),
      maxLength: property.maxLength === undefined ? "" : String(property.maxLength),
      pattern: property.pattern ?? "",
      minimum: property.minimum === undefined ? "" : String(property.minimum),
      maximum: property.maximum === undefined ? "" : String(property.maximum),
      defaultValue: textOf(property.default),
      allowedValues: (property.enum ?? []).map(String).join("\n"),
      itemsType: property.items?.type ?? "string",
    }),
  );
}

/** Why a field's name cannot be used, if it cannot: the API takes variable-style unique names. */
export function fieldNameProblemOf(field: SchemaField, fields: readonly SchemaField[]): string | undefined {
  const name = field.name.trim();
  if (name === "") return undefined;
  if (!VARIABLE_NAME_PATTERN.test(name)) {
    return "Use letters, digits and underscores, starting with a letter or underscore";
  }
  if (fields.some((other) => other.id !== field.id && other.name.trim() === name)) {
    return "Another field already has this name";
  }
  return undefined;
}

export function hasFieldProblems(fields: readonly SchemaField[]): boolean {
  return fields.some((field) => fieldNameProblemOf(field, fields) !== undefined);
}
