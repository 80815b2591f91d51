import fc from "fast-check";

/** The JSON Schema subset the OpenAPI document uses (zod's output). */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  default?: unknown;
}

/** Values that satisfy `schema` (mostly): the valid side of the fuzz, so handlers run too. */
export function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.jsonValue({ maxDepth: 1 });
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueFor(s, depth + 1)));
  if (schema.allOf?.[0]) return valueFor(schema.allOf[0], depth + 1);
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type) => valueFor({ ...schema, type }, depth + 1)));
  switch (schema.type) {
    case "string": {
      const maxLength = Math.min(schema.maxLength ?? 40, 40);
      const minLength = Math.min(schema.minLength ?? 0, maxLength);
      if (schema.pattern) {
        const pattern = new RegExp(schema.pattern);
        return fc
          .stringMatching(pattern)
          .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
      }
      return fc.string({ minLength, maxLength });
    }
    case "integer":
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER),
        max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case "number":
      return fc.double({
        min: schema.minimum ?? schema.exclusiveMinimum ?? -1e6,
        max: schema.maximum ?? schema.exclusiveMaximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(valueFor(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(Math.min(schema.maxItems ?? 3, 3), schema.minItems ?? 0),
      });
    case "object": {
      const properties = schema.properties ?? {};
      const record = fc.record(
        Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, valueFor(s, depth + 1)])),
        { requiredKeys: (schema.required ?? []).filter((key) => key in properties) },
      );
      if (typeof schema.additionalProperties === "object" && Object.keys(properties).length === 0)
        return fc.dictionary(fc.string({ maxLength: 12 }), valueFor(schema.additionalProperties, depth + 1), {
          maxKeys: 3,
        });
      return record;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

const SOME_UUID = "0d3c6b1e-4a7f-4c2d-9e8f-1a2b3c4d5e6f";

/**
 * Ids that look like UUIDs and are not the canonical 8-4-4-4-12 hex form: PostgreSQL's uuid input
 * rejects most (a 500 once a loose check let them through, issue 37) and reads others (no dashes,
 * braces) as a UUID our ids never are written as. Uppercase is valid (case-insensitive).
 */
export const idShapes = [
  "-".repeat(36),
  SOME_UUID.replaceAll("-", ""),
  `{${SOME_UUID}}`,
  `${SOME_UUID.slice(0, 35)}g`,
  `g${SOME_UUID.slice(1)}`,
  SOME_UUID.toUpperCase(),
  `${SOME_UUID} `,
  ` ${SOME_UUID}`,
  `${SOME_UUID}\u0000`,
  `${SOME_UUID}\n`,
  SOME_UUID.slice(0, 35),
  `${SOME_UUID}0`,
  `${SOME_UUID.slice(0, 8)}${SOME_UUID.slice(9, 14)}-${SOME_UUID.slice(14)}`,
  `${SOME_UUID.slice(0, 8)}-${SOME_UUID.slice(9, 13)}-${SOME_UUID.slice(14, 18)}-${SOME_UUID.slice(19, 23)}${SOME_UUID.slice(24)}-`,
  "0".repeat(8) +
    "-" +
    "0".repeat(4) +
    "-" +
    "0".repeat(4) +
    "-" +
    "0".repeat(4) +
    "-" +
    "0".repeat(11) +
    "-",
  `urn:uuid:${SOME_UUID}`,
  `${SOME_UUID.slice(0, 13)}-${SOME_UUID.slice(14)}-`.slice(0, 36),
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  `${SOME_UUID}/`,
  "ｆ".repeat(8) + SOME_UUID.slice(8),
];

/** Strings that have broken servers: unicode edge cases, NUL, SQL and template syntax, id shapes. */
const trickyStrings = [
  ...idShapes,
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u200b\ufeff",
  "🧨".repeat(50),
  "'; drop table users; --",
  '" or 1=1 --',
  "{{constructor.constructor('return process')()}}",
  ["$", "{process.exit(1)}"].join(""),
  "../../../../etc/passwd",
  "%00%2e%2e%2f",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "prototype",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "9007199254740993",
  "00000000-0000-0000-0000-000000000000",
];

/**
 * Random strings are drawn once into a pool (seeded, so runs repeat): generating graphemes and
 * binary strings per case cost more than the requests themselves.
 */
const randomStrings = fc.sample(
  fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.string({ unit: "binary", maxLength: 30 })),
  { numRuns: 300, seed: 7 },
);

/** Short hostile strings: for path segments and query values too. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...trickyStrings),
  fc.constantFrom(...randomStrings),
  fc.integer({ min: 100, max: 2_000 }).map((n) => "x".repeat(n)),
);

/** Long strings, up to a fifth of the body limit: for bodies only. */
const hugeString = fc.integer({ min: 10_000, max: 200_000 }).map((n) => "x".repeat(n));

/** Any JSON value of a wrong shape, including the boundary numbers. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hugeString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, [], {}),
  fc.jsonValue({ maxDepth: 3 }),
);

/**
 * A raw body: the schema's own values, those with one field made hostile, or something hostile
 * outright; `invalid` marks the ones no route may accept.
 */
export function hostileBody(
  schema: JsonSchema | undefined,
): fc.Arbitrary<{ text: string; invalid: boolean }> {
  const valid = valueFor(schema);
  const withHostileField = fc
    .tuple(
      valid,
      fc.oneof(fc.constantFrom(...Object.keys(schema?.properties ?? { x: 1 })), hostileString),
      hostileValue,
    )
    .map(([value, key, bad]) =>
      JSON.stringify(
        value && typeof value === "object" && !Array.isArray(value)
          ? { ...value, [key]: bad }
          : { [key]: bad },
      ),
    );
  const prototypeKeys = fc
    .tuple(valid, fc.constantFrom("__proto__", "constructor", "prototype"), fc.jsonValue({ maxDepth: 2 }))
    .map(([value, key, bad]) => {
      const text = JSON.stringify(value && typeof value === "object" && !Array.isArray(value) ? value : {});
      const inner = key === "constructor" ? `{"prototype":${JSON.stringify(bad)}}` : JSON.stringify(bad);
      return text === "{}" ? `{"${key}":${inner}}` : `{"${key}":${inner},${text.slice(1)}`;
    });
  const deeplyNested = fc
    .integer({ min: 50, max: 20_000 })
    .chain((depth) =>
      fc.constantFrom(
        `${"[".repeat(depth)}${"]".repeat(depth)}`,
        `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`,
        `{"inputs":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`,
      ),
    );
  const notJson = fc.constantFrom("", "{", "nul", "[1,]", '{"a":1}{"b":2}', "\u0000", "{'a':1}");
  const maybe = (text: string) => ({ text, invalid: false });
  const never = (text: string) => ({ text, invalid: true });
  return fc.oneof(
    { arbitrary: valid.map((value) => maybe(JSON.stringify(value) ?? "null")), weight: 4 },
    { arbitrary: withHostileField.map(maybe), weight: 4 },
    { arbitrary: hostileValue.map((value) => maybe(JSON.stringify(value) ?? "null")), weight: 2 },
    { arbitrary: prototypeKeys.map(never), weight: 1 },
    { arbitrary: deeplyNested.map(maybe), weight: 1 },
    { arbitrary: notJson.map(never), weight: 1 },
  );
}

export interface QueryParameter {
  name: string;
  schema?: JsonSchema;
}

/** A query string from the route's declared parameters, with hostile values and repeated keys. */
export function queryString(parameters: QueryParameter[]): fc.Arbitrary<string> {
  const pairs = fc.array(
    fc.oneof(
      ...(parameters.length > 0
        ? [
            fc.tuple(
              fc.constantFrom(...parameters.map((p) => p.name)),
              fc.oneof(fc.constant(undefined), hostileString),
            ),
            fc.constantFrom(...parameters).chain((p) => fc.tuple(fc.constant(p.name), valueFor(p.schema))),
          ]
        : []),
      fc.tuple(fc.constantFrom("__proto__[x]", "constructor[prototype][y]", "a[]", "a[b][c]"), hostileString),
    ),
    { maxLength: 4 },
  );
  return pairs.map((list) =>
    list
      .map(([name, value]) =>
        value === undefined
          ? encode(name)
          : `${encode(name)}=${encode(typeof value === "string" ? value : JSON.stringify(value))}`,
      )
      .join("&"),
  );
}

/** Percent-encodes; a URL can only carry UTF-8, so lone surrogates become U+FFFD first. */
function encode(value: string): string {
  return encodeURIComponent(Buffer.from(value, "utf8").toString("utf8"));
}

/** Percent sequences that are not UTF-8 or that decode to path tricks, sent as they are. */
const rawSegments = ["%FF", "%ED%A0%80", "%00", "%2e%2e", "..", "%", "%25", "a%2Fb", "%C0%AF"];

/** An encoded path segment: a real id of the world, or something that is not. */
export function pathSegment(realIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...realIds),
    hostileString.filter((s) => s.length > 0).map(encode),
    fc.constantFrom(...rawSegments),
    fc.constantFrom(...idShapes).map(encode),
    fc.uuid(),
  );
}
