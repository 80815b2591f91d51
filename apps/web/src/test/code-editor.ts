import { EditorView } from "@codemirror/view";
import { act, screen } from "@testing-library/react";

/** The CodeMirror editor whose editable area has this accessible name. */
export function codeEditor(name: string): EditorView {
  const content = screen.getByRole("textbox", { name });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error(`no CodeMirror editor named ${name}`);
  return view;
}

/** Replaces an editor's text as typing would (jsdom cannot drive contenteditable input). */
export function setEditorText(name: string, text: string): void {
  const view = codeEditor(name);
  act(() => {
    view.dispatch({
      changes: { from: 0, to: view.state.doc.length, insert: text },
      selection: { anchor: text.length },
      userEvent: "input.type",
    });
  });
}
