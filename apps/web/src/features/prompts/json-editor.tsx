import { json } from "@codemirror/lang-json";
import { useMemo } from "react";
import { CodeEditorField, type CodeEditorFieldProps } from "./code-editor";

/** A labelled JSON editor (syntax highlighting, bracket-aware indentation). */
export function JsonEditor(props: Omit<CodeEditorFieldProps, "extensions" | "minHeight" | "error">) {
  const extensions = useMemo(() => json(), []);
  return <CodeEditorField {...props} extensions={extensions} minHeight="10rem" />;
}
