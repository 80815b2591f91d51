import { AppError, invalidFields } from "../../lib/errors.ts";

/**
 * Which version a call asks for (docs/decisions/057): a label (`production`, `staging`, the
 * creator's own) or a version number. None means `production`, or an experiment's arm.
 */
export type VersionPin = { label: string } | { version: number };

export const PRODUCTION = "production";
/** The newest version: set by every save, never moved by hand (prompts/labels.ts). */
export const LATEST = "latest";
const LABEL_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** What reads as a version number: `v12`, `V12` or `12`, and the malformed `v0`, `v-1`, `v01`, `-3`. */
const VERSION_SHAPED = /^v?-?\d+$/i;
/** A version as it must be written: from 1, no leading zeros, `v` (or `V`) optional. */
const VERSION_NUMBER = /^v?([1-9]\d{0,8})$/i;
const PIN_RULE =
  "must be a version (v12; versions start at v1, written without leading zeros) or a label (production, staging, …)";

/**
 * A pin as callers write it (docs/decisions/057, 072): `v12`, `V12` or `12` for a version, else a
 * label name. Anything shaped like a version number is read as one, never as a label: `v0`, `v-1`,
 * `v01`, `0` are a 400 naming `field` (versions start at 1 and are written without leading zeros),
 * as is anything neither a version nor a label name. Undefined for an empty value.
 */
export function parseVersionPin(value: string | undefined | null, field: string): VersionPin | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  const numbered = VERSION_NUMBER.exec(text);
  if (numbered) return { version: Number(numbered[1]) };
  if (VERSION_SHAPED.test(text))
    throw new AppError(
      "bad_request",
      `Invalid request: ${field} pins version '${text}', and versions start at v1 and are written without leading zeros (v1, v12)`,
      { fields: { [field]: PIN_RULE } },
    );
  if (LABEL_PATTERN.test(text)) return { label: text };
  throw new AppError("bad_request", `Invalid request: ${field} ${PIN_RULE}`, {
    fields: { [field]: PIN_RULE },
  });
}

/** Whether a label name would be read as a version by parseVersionPin (`v0`, `v12`): no label may have it. */
export function isVersionShaped(name: string): boolean {
  return VERSION_SHAPED.test(name);
}

export function describePin(pin: VersionPin): string {
  return "version" in pin ? `v${pin.version}` : pin.label;
}

/** A pin and the request field it came in (what a 400 or a 404 names). */
export interface GivenPin {
  pin: VersionPin;
  field: string;
}

/**
 * The one pin parser every protocol calls (docs/decisions/075): each reads its own fields (the
 * `Promptmint-Version` header, an OpenAI `model: "slug@v12"`, an MCP argument or `_meta`) and
 * hands them here, first the one whose field a disagreement names. Each value is parsed by
 * parseVersionPin (a 400 naming its field when malformed); two naming different versions or labels
 * are a 400 naming the first's field. Undefined when none pins.
 */
export function pinFrom(
  sources: Array<{ value?: string | null; pin?: VersionPin; field: string; say?: string } | undefined>,
): GivenPin | undefined {
  const given: Array<GivenPin & { say: string }> = [];
  for (const source of sources) {
    if (!source) continue;
    const pin = source.pin ?? parseVersionPin(source.value, source.field);
    if (pin) given.push({ pin, field: source.field, say: source.say ?? source.field });
  }
  const [first, ...others] = given;
  for (const other of others)
    if (first && describePin(other.pin) !== describePin(first.pin))
      throw invalidFields({
        [first.field]: `pins ${describePin(first.pin)} but ${other.say} pins ${describePin(other.pin)}: send one`,
      });
  return first && { pin: first.pin, field: first.field };
}
