/** `{{variable}}` templates: detection, validation of placeholders, rendering. */

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class TemplateError extends Error {}

/** Variable names in order of first appearance; throws TemplateError on a malformed placeholder. */
export function detectVariables(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? "";
    if (!VARIABLE_NAME.test(name)) {
      throw new TemplateError(
        `Malformed placeholder '${match[0]}': use {{name}} with letters, digits and underscores, not starting with a digit`,
      );
    }
    if (!names.includes(name)) names.push(name);
  }
  const stripped = template.replace(PLACEHOLDER, "");
  const stray = /\{\{|\}\}/.exec(stripped);
  if (stray) {
    const at = stripped.slice(Math.max(0, stray.index - 15), stray.index + 17);
    throw new TemplateError(`Unclosed or unopened placeholder near '${at}'`);
  }
  return names;
}

function stringify(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Fills every placeholder; a variable absent from `inputs` is an error naming it. */
export function renderTemplate(template: string, inputs: Record<string, unknown>): string {
  const variables = detectVariables(template);
  const missing = variables.filter((name) => !(name in inputs) || inputs[name] === undefined);
  if (missing.length > 0) {
    throw new TemplateError(
      `Missing value for variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
    );
  }
  return template.replace(PLACEHOLDER, (_match, name: string) => stringify(inputs[name.trim()]));
}
