import { json } from "@codemirror/lang-json";
import { useId, useMemo } from "react";
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
  const id = useId();
  const labelId = `${id}-label`;
  const hintId = hint ? `${id}-hint` : undefined;
  const extensions = useMemo(() => json(), []);

  return (
    <div className="space-y-1.5">
      <div id={labelId} className="text-sm font-medium text-slate-700">
        {label}
      </div>
      <CodeEditor
        value={value}
        onChange={onChange}
        labelledBy={labelId}
        describedBy={hintId}
        extensions={extensions}
        placeholder={placeholder}
        minHeight="10rem"
      />
      {hint && (
        <p id={hintId} className="text-xs text-slate-500">
          {hint}
        </p>
      )}
    </div>
  );
}
