import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { Compartment, EditorState, type Extension } from "@codemirror/state";
import { EditorView, keymap, placeholder as placeholderText } from "@codemirror/view";
import { useEffect, useRef } from "react";
import { FieldFrame, useFieldDescription } from "../../components/ui/field-message";

const baseTheme = EditorView.theme({
  "&": { fontSize: "13px", backgroundColor: "#fff" },
  "&.cm-focused": { outline: "none" },
  ".cm-content": {
    fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, monospace',
    padding: "10px 0",
    caretColor: "#2563eb",
  },
  ".cm-line": { padding: "0 12px" },
  ".cm-placeholder": { color: "#94a3b8" },
  ".cm-scroller": { overflow: "auto" },
  ".cm-tooltip": { border: "1px solid #e2e8f0", borderRadius: "8px", backgroundColor: "#fff" },
});

/**
 * A CodeMirror 6 editor held in sync with `value`. Its editable area is labelled by
 * `labelledBy` (role textbox, multi-line), and Tab is left to move focus.
 */
export function CodeEditor({
  value,
  onChange,
  labelledBy,
  describedBy,
  extensions,
  placeholder,
  minHeight = "8rem",
  invalid = false,
}: {
  value: string;
  onChange: (value: string) => void;
  labelledBy: string;
  describedBy?: string;
  /** Language and features; a new array reconfigures the editor, so memoize it. */
  extensions?: Extension;
  placeholder?: string;
  minHeight?: string;
  invalid?: boolean;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const features = useRef(new Compartment());
  const attributes = useRef(new Compartment());

  const contentAttributes = EditorView.contentAttributes.of({
    "aria-labelledby": labelledBy,
    ...(describedBy ? { "aria-describedby": describedBy } : {}),
    ...(invalid ? { "aria-invalid": "true" } : {}),
  });

  // biome-ignore lint/correctness/useExhaustiveDependencies: the view is created once; later props are applied by the effects below.
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: value,
        extensions: [
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.lineWrapping,
          baseTheme,
          EditorView.theme({ ".cm-content, .cm-gutter": { minHeight } }),
          placeholder ? placeholderText(placeholder) : [],
          attributes.current.of(contentAttributes),
          features.current.of(extensions ?? []),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    viewRef.current = view;
    return () => {
      view.destroy();
      viewRef.current = null;
    };
  }, []);

  useEffect(() => {
    viewRef.current?.dispatch({ effects: features.current.reconfigure(extensions ?? []) });
  }, [extensions]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: contentAttributes is derived from these values.
  useEffect(() => {
    viewRef.current?.dispatch({ effects: attributes.current.reconfigure(contentAttributes) });
  }, [labelledBy, describedBy, invalid]);

  // Outside changes (a load, a restored version) replace the text; the editor's own edits match already.
  useEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    const current = view.state.doc.toString();
    if (current !== value) view.dispatch({ changes: { from: 0, to: current.length, insert: value } });
  }, [value]);

  return (
    <div
      ref={hostRef}
      className={
        "overflow-hidden rounded-lg border bg-white shadow-sm transition-colors focus-within:ring-2 " +
        (invalid
          ? "border-red-500 focus-within:ring-red-500/20"
          : "border-slate-300 focus-within:border-brand-600 focus-within:ring-brand-600/20")
      }
    />
  );
}

export type CodeEditorFieldProps = { label: string; hint?: string; error?: string } & Omit<
  Parameters<typeof CodeEditor>[0],
  "labelledBy" | "describedBy" | "invalid"
>;

/** A labelled code editor with its validation message and help text under it. */
export function CodeEditorField({ label, hint, error, ...editor }: CodeEditorFieldProps) {
  const field = useFieldDescription(undefined, hint, error);
  return (
    <FieldFrame field={field} label={label} hint={hint} error={error} labelledBy>
      <CodeEditor
        {...editor}
        labelledBy={field.labelId}
        describedBy={field.describedBy}
        invalid={Boolean(error)}
      />
    </FieldFrame>
  );
}
