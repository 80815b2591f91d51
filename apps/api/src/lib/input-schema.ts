import { isDeepStrictEqual } from "node:util";
import {
  type AllowedValue,
  allowedValueText,
  type IoSchema,
  type SchemaProperty,
} from "@promptmint/contracts";
import { compilePattern, createMatchBudget, type MatchBudget } from "./safe-pattern.ts";

/**
 * Validates values against the JSON-schema subset apps declare (SPEC §3 "Schema").
 * Returns problems keyed by `<prefix>.<field>`; empty when valid. Defaults are applied in place
 * of missing values so templates see them.
 */
export function validateAgainstSchema(
  schema: IoSchema,
  values: Record<string, unknown>,
  prefix: string,
): { problems: Record<string, string>; values: Record<string, unknown> } {
  const problems: Record<string, string> = {};
  const result: Record<string, unknown> = {};
  const budget = createMatchBudget();
  for (const [name, value] of Object.entries(values)) {
    if (!(name in schema.properties)) problems[`${prefix}.${name}`] = "is not a declared input";
    else result[name] = value;
  }
  for (const [name, property] of Object.entries(schema.properties)) {
    const key = `${prefix}.${name}`;
    let value = result[name];
    if (value === undefined || value === null || value === "") {
      if (property.default !== undefined) {
        result[name] = property.default;
        continue;
      }
      if (schema.required.includes(name)) problems[key] = "is required";
      continue;
    }
    if (
      (property.type === "number" || property.type === "integer") &&
      typeof value === "string" &&
      value.trim() !== ""
    ) {
      const parsed = Number(value);
      if (!Number.isNaN(parsed)) value = result[name] = parsed;
    }
    const problem = checkValue(property, value, budget);
    if (problem) problems[key] = problem;
  }
  return { problems, values: result };
}

function checkValue(property: SchemaProperty, value: unknown, budget: MatchBudget): string | undefined {
  switch (property.type) {
    case "string": {
      if (typeof value !== "string") return "must be a string";
      if (property.minLength !== undefined && value.length < property.minLength)
        return `must be at least ${property.minLength} characters`;
      if (property.maxLength !== undefined && value.length > property.maxLength)
        return `must be at most ${property.maxLength} characters`;
      const mismatch =
        property.pattern !== undefined ? checkPattern(property.pattern, value, budget) : undefined;
      if (mismatch) return mismatch;
      break;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number";
      if (property.type === "integer" && !Number.isInteger(value)) return "must be a whole number";
      if (property.minimum !== undefined && value < property.minimum)
        return `must be at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum)
        return `must be at most ${property.maximum}`;
      break;
    }
    case "boolean":
      if (typeof value !== "boolean") return "must be true or false";
      break;
    case "array": {
      if (!Array.isArray(value)) return "must be an array";
      const items = property.items;
      if (items && value.some((item) => checkValue({ type: items.type }, item, budget)))
        return `must contain only ${items.type} items`;
      const allowedItems = items?.enum;
      if (allowedItems && value.some((item) => !isAllowed(allowedItems, item)))
        return `must contain only items among: ${listOf(allowedItems)}`;
      break;
    }
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) return "must be an object";
      break;
  }
  if (property.enum && !isAllowed(property.enum, value)) return `must be one of: ${listOf(property.enum)}`;
  return undefined;
}

/** Allowed values compare by value, so a JSON object or array matches an equal one. */
function isAllowed(allowed: readonly AllowedValue[], value: unknown): boolean {
  return allowed.some((candidate) => isDeepStrictEqual(candidate, value));
}

function listOf(allowed: readonly AllowedValue[]): string {
  return allowed.map(allowedValueText).join(", ");
}

/**
 * Patterns run on RE2 (linear time, lib/safe-pattern.ts) within the request's matching budget. A
 * stored pattern RE2 cannot run (saved before patterns were checked this way) is the app's fault,
 * but the value cannot be vouched for either: the caller is told so by name.
 */
function checkPattern(source: string, value: string, budget: MatchBudget): string | undefined {
  const compiled = compilePattern(source);
  if (!compiled.ok)
    return "cannot be checked: the app's pattern for it is not supported; ask its creator to fix it";
  const matched = budget.matches(compiled.pattern, value);
  if (matched === "over budget") return "is too long to check against its pattern; send a shorter value";
  return matched ? undefined : `must match the pattern ${source}`;
}

/** Whether each regular expression in a schema can run on RE2 (checked when the schema is saved or tested). */
export function invalidPatterns(schema: IoSchema, prefix: string): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    if (property.pattern === undefined) continue;
    const compiled = compilePattern(property.pattern);
    if (!compiled.ok) problems[`${prefix}.properties.${name}.pattern`] = compiled.problem;
  }
  for (const name of schema.required) {
    if (!(name in schema.properties))
      problems[`${prefix}.required`] = `names '${name}', which is not a property`;
  }
  return problems;
}
