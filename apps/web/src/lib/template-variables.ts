import type { IoSchema, SchemaProperty } from "@promptmint/contracts";

/** A `{{ ... }}` placeholder, as the API reads templates. */
export const PLACEHOLDER_PATTERN = /\{\{\s*([^{}]*?)\s*\}\}/g;
export const VARIABLE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The well-formed variable names of a template, in order of first appearance. */
export function templateVariablesOf(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER_PATTERN)) {
    const name = match[1] ?? "";
    if (VARIABLE_NAME_PATTERN.test(name) && !names.includes(name)) names.push(name);
  }
  return names;
}

/** What a test run sends for one input: its default, its first allowed value, or a typed sample. */
export function sampleValueOf(name: string, property: SchemaProperty): unknown {
  if (property.default !== undefined) return property.default;
  if (property.enum && property.enum.length > 0) return property.enum[0];
  switch (property.type) {
    case "string":
      return `Sample ${name}`;
    case "number":
      return property.minimum ?? 1;
    case "integer":
      return property.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
  }
}

/** Test inputs for every field of the input schema. */
export function sampleInputsOf(schema: IoSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => [name, sampleValueOf(name, property)]),
  );
}

/** A test input typed in a text box, read as the field's type (numbers, booleans, JSON). */
export function parseSampleInput(text: string, property: SchemaProperty | undefined): unknown {
  if (!property || property.type === "string") return text;
  if (property.type === "number" || property.type === "integer") {
    const value = Number(text);
    return text.trim() === "" || Number.isNaN(value) ? text : value;
  }
  if (property.type === "boolean") {
    if (text.trim() === "true") return true;
    if (text.trim() === "false") return false;
    return text;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The text box form of a sample value. */
export function sampleInputText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}
