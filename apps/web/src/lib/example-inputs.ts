import type { IoSchema, SchemaProperty } from "@promptmint/contracts";

// A call the snippet shows must pass the gateway's input checks as it stands (issue 42: no
// `<query>` placeholders): each input gets a value its schema accepts.

const TEXT_CANDIDATES = [
  "example",
  "hello",
  "abc",
  "a",
  "1",
  "test@example.com",
  "2026-01-01",
  "https://example.com",
];

function fitsText(text: string, property: SchemaProperty): boolean {
  if (property.minLength !== undefined && text.length < property.minLength) return false;
  if (property.maxLength !== undefined && text.length > property.maxLength) return false;
  if (property.pattern === undefined) return true;
  try {
    return new RegExp(property.pattern, "u").test(text);
  } catch {
    return false;
  }
}

/** A short text the property accepts: its name or a common shape, padded to its minimum length. */
function exampleText(name: string, property: SchemaProperty): string {
  const words = name.replace(/_/g, " ").trim() || "example";
  for (const candidate of [`example ${words}`, words, ...TEXT_CANDIDATES]) {
    const padded =
      property.minLength !== undefined && candidate.length < property.minLength
        ? candidate.padEnd(property.minLength, ".")
        : candidate;
    if (fitsText(padded, property)) return padded;
  }
  // A pattern none of these meet: a placeholder that says what to put there.
  return `<${name}>`;
}

function exampleNumber(property: SchemaProperty, integer: boolean): number {
  const low = property.minimum ?? (property.maximum !== undefined ? Math.min(1, property.maximum) : 1);
  const value = integer ? Math.ceil(low) : low;
  return property.maximum !== undefined && value > property.maximum ? property.maximum : value;
}

/** One value the property accepts: its default, its first allowed value, or one of its type. */
export function exampleValueOf(name: string, property: SchemaProperty): unknown {
  if (property.default !== undefined) return property.default;
  if (property.enum && property.enum.length > 0) return property.enum[0];
  switch (property.type) {
    case "string":
      return exampleText(name, property);
    case "number":
      return exampleNumber(property, false);
    case "integer":
      return exampleNumber(property, true);
    case "boolean":
      return true;
    case "array": {
      const items = property.items;
      if (!items) return [];
      return [exampleValueOf(name, { type: items.type, enum: items.enum })];
    }
    case "object":
      return {};
  }
}

/** A valid `inputs` object for the app's input schema: every declared input with an example value. */
export function exampleInputsOf(schema: IoSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => [name, exampleValueOf(name, property)]),
  );
}
