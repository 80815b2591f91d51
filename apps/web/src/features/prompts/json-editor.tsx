import { json } from "@codemirror/lang-json";
import { useMemo } from "react";
import { CodeEditorField } from "./code-editor";

/** A labelled JSON editor (syntax highlighting, bracket-aware indentation). */
export function JsonEditor({
  label,
  value,
  onChange,
  hint,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: string;
  placeholder?: string;
}) {
  const extensions = useMemo(() => json(), []);
  return (
    <CodeEditorField
      label={label}
      hint={hint}
      value={value}
      onChange={onChange}
      extensions={extensions}
      placeholder={placeholder}
      minHeight="10rem"
    />
  );
}
