import { CompletionContext } from "@codemirror/autocomplete";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { afterEach, describe, expect, it } from "vitest";
import {
  templateEditorExtensions,
  type VariableProperties,
  variableCompletionSource,
  variableHelpOf,
} from "./template-editor-extensions";

const properties: VariableProperties = {
  topic: { type: "string", description: "What to write about" },
  words: { type: "integer" },
};

function completionsAt(doc: string) {
  const state = EditorState.create({ doc });
  const result = variableCompletionSource(properties)(new CompletionContext(state, doc.length, false));
  return (
    result && { from: result.from, options: result.options.map((option) => [option.label, option.apply]) }
  );
}

let view: EditorView | undefined;
afterEach(() => view?.destroy());

describe("template editor", () => {
  it("offers the schema's variables after {{ and closes the placeholder", () => {
    expect(completionsAt("Write about {{")).toEqual({
      from: 14,
      options: [
        ["topic", "topic}}"],
        ["words", "words}}"],
      ],
    });
    expect(completionsAt("Write about {{ to")?.from).toBe(15);
    expect(completionsAt("Write about topic")).toBeNull();
  });

  it("explains a variable on hover: its type and description, or that the schema lacks it", () => {
    expect(variableHelpOf("topic", properties)).toBe("string — What to write about");
    expect(variableHelpOf("words", properties)).toBe("integer");
    expect(variableHelpOf("tone", properties)).toBe("Not in input schema");
    expect(variableHelpOf("1bad", properties)).toBe("Not a valid variable name");
  });

  it("highlights schema variables, unknown ones and malformed ones differently", () => {
    const parent = document.createElement("div");
    document.body.append(parent);
    view = new EditorView({
      parent,
      state: EditorState.create({
        doc: "About {{topic}} in {{ tone }} for {{1bad}}",
        extensions: templateEditorExtensions(properties),
      }),
    });

    expect(parent.querySelector(".cm-template-variable")?.textContent).toBe("{{topic}}");
    expect(parent.querySelector(".cm-template-variable-unknown")?.textContent).toBe("{{ tone }}");
    expect(parent.querySelector(".cm-template-variable-invalid")?.textContent).toBe("{{1bad}}");
  });
});
