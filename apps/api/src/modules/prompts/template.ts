/** `{{variable}}` templates: detection, validation of placeholders, rendering. */

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The longest prompt a template may render to (values included): far past any model's context. */
export const MAX_RENDERED_CHARS = 1_000_000;

export class TemplateError extends Error {}

interface Placeholder {
  start: number;
  end: number;
  /** The text between the braces, trimmed. */
  name: string;
}

/**
 * Every `{{ … }}` with no brace inside, left to right, in one linear pass. (A regular expression
 * such as `\{\{\s*([^{}]*?)\s*\}\}` backtracks cubically on `{{` followed by many spaces: a
 * 50 kB template could hold the process for minutes.)
 */
function findPlaceholders(template: string): Placeholder[] {
  const found: Placeholder[] = [];
  let from = 0;
  for (;;) {
    const start = template.indexOf("{{", from);
    if (start < 0) return found;
    let at = start + 2;
    while (at < template.length && template[at] !== "{" && template[at] !== "}") at += 1;
    if (template.startsWith("}}", at)) {
      found.push({ start, end: at + 2, name: template.slice(start + 2, at).trim() });
      from = at + 2;
    } else {
      // No placeholder starts here; the next `{{` is at or after the brace that stopped the scan.
      from = start + 1;
    }
  }
}

/** The template with `replace(placeholder)` in place of each placeholder. */
function substitute(template: string, placeholders: Placeholder[], replace: (p: Placeholder) => string) {
  const pieces: string[] = [];
  let from = 0;
  for (const placeholder of placeholders) {
    pieces.push(template.slice(from, placeholder.start), replace(placeholder));
    from = placeholder.end;
  }
  pieces.push(template.slice(from));
  return pieces.join("");
}

/** Variable names in order of first appearance; throws TemplateError on a malformed placeholder. */
export function detectVariables(template: string): string[] {
  const placeholders = findPlaceholders(template);
  const names = new Set<string>();
  for (const { start, end, name } of placeholders) {
    if (!VARIABLE_NAME.test(name)) {
      throw new TemplateError(
        `Malformed placeholder '${template.slice(start, end).slice(0, 100)}': use {{name}} with letters, digits and underscores, not starting with a digit`,
      );
    }
    names.add(name);
  }
  const stripped = substitute(template, placeholders, () => "");
  const stray = Math.min(...[stripped.indexOf("{{"), stripped.indexOf("}}")].filter((i) => i >= 0));
  if (Number.isFinite(stray)) {
    const at = stripped.slice(Math.max(0, stray - 15), stray + 17);
    throw new TemplateError(`Unclosed or unopened placeholder near '${at}'`);
  }
  return [...names];
}

function stringify(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/**
 * Fills every placeholder; a variable absent from `inputs` is an error naming it, and so is a
 * result longer than MAX_RENDERED_CHARS (a long value repeated by many placeholders would
 * otherwise build strings of gigabytes).
 */
export function renderTemplate(template: string, inputs: Record<string, unknown>): string {
  const variables = detectVariables(template);
  const missing = variables.filter((name) => !(name in inputs) || inputs[name] === undefined);
  if (missing.length > 0) {
    throw new TemplateError(
      `Missing value for variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
    );
  }
  const values = new Map(variables.map((name) => [name, stringify(inputs[name])]));
  const placeholders = findPlaceholders(template);
  let length = template.length;
  for (const placeholder of placeholders) {
    length += (values.get(placeholder.name)?.length ?? 0) - (placeholder.end - placeholder.start);
  }
  if (length > MAX_RENDERED_CHARS) {
    throw new TemplateError(
      `The filled template would be ${length} characters, more than the limit of ${MAX_RENDERED_CHARS}`,
    );
  }
  return substitute(template, placeholders, (placeholder) => values.get(placeholder.name) ?? "");
}
