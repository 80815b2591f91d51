import type { IoSchema } from "@promptmint/contracts";
import { useId, useMemo } from "react";
import { CodeEditor } from "./code-editor";
import { templateEditorExtensions, type VariableProperties } from "./template-editor-extensions";

/**
 * A prompt editor with `{{variable}}` highlighting, completion of the input schema's variables
 * after `{{`, and hover help on a variable.
 */
export function TemplateEditor({
  label,
  value,
  onChange,
  inputSchema,
  hint,
  error,
  placeholder,
  minHeight,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  inputSchema: IoSchema;
  hint?: string;
  error?: string;
  placeholder?: string;
  minHeight?: string;
}) {
  const id = useId();
  const labelId = `${id}-label`;
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  // Keyed by content: a schema rebuilt with the same fields must not reset the editor's features.
  const propertiesKey = JSON.stringify(inputSchema.properties);
  const extensions = useMemo(
    () => templateEditorExtensions(JSON.parse(propertiesKey) as VariableProperties),
    [propertiesKey],
  );

  return (
    <div className="space-y-1.5">
      <div id={labelId} className="text-sm font-medium text-slate-700">
        {label}
      </div>
      <CodeEditor
        value={value}
        onChange={onChange}
        labelledBy={labelId}
        describedBy={[errorId, hintId].filter(Boolean).join(" ") || undefined}
        extensions={extensions}
        placeholder={placeholder}
        minHeight={minHeight}
        invalid={Boolean(error)}
      />
      {error && (
        <p id={errorId} className="text-sm text-red-600">
          {error}
        </p>
      )}
      {hint && (
        <p id={hintId} className="text-xs text-slate-500">
          {hint}
        </p>
      )}
    </div>
  );
}
