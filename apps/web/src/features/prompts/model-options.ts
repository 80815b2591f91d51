import type { ModelCatalog } from "@promptmint/contracts";
import type { SelectOption } from "../../components/ui/select-field";

/** SPEC §9: the prompt builder's models. */
export const BUILDER_MODELS = [
  "gpt-4-turbo",
  "gpt-4",
  "claude-3-opus",
  "claude-3-sonnet",
  "claude-3-haiku",
  "gemini-pro",
] as const;

/** SPEC §9: the prompt editor's models. */
export const EDITOR_MODELS = ["gpt4", "claude3", "gemini", "mixtral"] as const;

/**
 * The screen's own list first, then every other model the server's catalog offers (the builder and
 * the editor offer the same models, in their own order), each under its catalog name, and the
 * current model last if the catalog does not know it (so a saved choice is never lost).
 */
export function modelOptionsOf(
  primary: readonly string[],
  catalog: ModelCatalog | undefined,
  current: string,
): SelectOption[] {
  const labelOf = (id: string) => catalog?.models.find((model) => model.id === id)?.label ?? id;
  const options: SelectOption[] = primary.map((id) => ({ value: id, label: labelOf(id) }));
  const listed = new Set<string>(primary);
  for (const model of catalog?.models ?? []) {
    if (!listed.has(model.id)) options.push({ value: model.id, label: model.label });
  }
  if (current && !options.some((option) => option.value === current)) {
    options.push({ value: current, label: labelOf(current) });
  }
  return options;
}
