import type { ModelCatalog } from "@promptmint/contracts";
import { describe, expect, it } from "vitest";
import { BUILDER_MODELS, EDITOR_MODELS, modelOptionsOf } from "./model-options";

const catalog = {
  models: [
    { id: "gpt-4", label: "GPT-4" },
    { id: "gpt4", label: "GPT-4 (alias)" },
    { id: "gpt-4o", label: "GPT-4o" },
    { id: "sandbox", label: "Sandbox (echo, offline)" },
  ],
} as unknown as ModelCatalog;

describe("model options", () => {
  it("names every model by its catalog label, the starter gpt4 included, in the builder and the editor alike", () => {
    const builder = modelOptionsOf(BUILDER_MODELS, catalog, "gpt4");
    expect(builder.find((option) => option.value === "gpt4")?.label).toBe("GPT-4 (alias)");
    expect(builder.some((option) => option.label === "gpt4")).toBe(false);
    const editor = modelOptionsOf(EDITOR_MODELS, catalog, "gpt4");
    // Every model the catalog offers is on both screens, each screen in its own order.
    for (const { id } of catalog.models) {
      expect(builder.some((option) => option.value === id)).toBe(true);
      expect(editor.some((option) => option.value === id)).toBe(true);
    }
    expect(editor[0]?.value).toBe("gpt4");
  });

  it("keeps a saved model the catalog does not know, under its id, last", () => {
    const options = modelOptionsOf(EDITOR_MODELS, catalog, "retired-model");
    expect(options.at(-1)).toEqual({ value: "retired-model", label: "retired-model" });
  });
});
