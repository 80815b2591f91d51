import { json } from "@codemirror/lang-json";
import { useMemo } from "react";
import { FieldFrame, useFieldDescription } from "../../components/ui/field-message";
import { CodeEditor } from "./code-editor";

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
  const field = useFieldDescription(undefined, hint);
  const extensions = useMemo(() => json(), []);

  return (
    <FieldFrame field={field} label={label} hint={hint} labelledBy>
      <CodeEditor
        value={value}
        onChange={onChange}
        labelledBy={field.labelId}
        describedBy={field.describedBy}
        extensions={extensions}
        placeholder={placeholder}
        minHeight="10rem"
      />
    </FieldFrame>
  );
}
