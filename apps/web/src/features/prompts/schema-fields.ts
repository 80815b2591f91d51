import type { AllowedValue, IoSchema, SchemaFieldType, SchemaProperty } from "@promptmint/contracts";
import { VARIABLE_NAME_PATTERN } from "../../lib/template-variables";

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

function numberOf(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function lengthOf(text: string): number | undefined {
  const value = numberOf(text);
  return value !== undefined && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A value of `type` typed as text: numbers, true/false, JSON for arrays and objects; undefined if it is none. */
function typedValueOf(type: SchemaFieldType, text: string): unknown {
  switch (type) {
    case "string":
      return text === "" ? undefined : text;
    case "number":
      return numberOf(text);
    case "integer": {
      const value = numberOf(text);
      return value !== undefined && Number.isInteger(value) ? value : undefined;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : undefined;
    case "array":
    case "object": {
      if (text.trim() === "") return undefined;
      try {
        const value = JSON.parse(text) as unknown;
        const isArray = Array.isArray(value);
        const fits = type === "array" ? isArray : typeof value === "object" && value !== null && !isArray;
        return fits ? value : undefined;
      } catch {
        return undefined;
      }
    }
  }
}

/** The type allowed values are of: an array's allowed values are those of its items (docs/decisions/036). */
export function allowedValueType(field: Pick<SchemaField, "type" | "itemsType">): SchemaFieldType {
  return field.type === "array" ? field.itemsType : field.type;
}

/**
 * SPEC §5: allowed values are the lines, trimmed, blanks dropped, read as their type (numbers,
 * true/false, JSON objects); lines that are not a value of the type are dropped.
 */
export function allowedValuesOf(field: SchemaField): AllowedValue[] {
  const type = allowedValueType(field);
  return field.allowedValues
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => typedValueOf(type, line))
    .filter((value): value is AllowedValue => value !== undefined);
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
  const defaultValue = typedValueOf(field.type, field.defaultValue);
  if (defaultValue !== undefined) property.default = defaultValue;
  const allowed = allowedValuesOf(field);
  const allowedEnum = allowed.length > 0 ? { enum: allowed } : {};
  if (field.type === "array") property.items = { type: field.itemsType, ...allowedEnum };
  else Object.assign(property, allowedEnum);
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
      allowedValues: (property.enum ?? property.items?.enum ?? []).map(textOf).join("\n"),
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
