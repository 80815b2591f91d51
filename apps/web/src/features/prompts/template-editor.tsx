import type { IoSchema } from "@promptmint/contracts";
import { useMemo } from "react";
import { CodeEditorField } from "./code-editor";
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
  // Keyed by content: a schema rebuilt with the same fields must not reset the editor's features.
  const propertiesKey = JSON.stringify(inputSchema.properties);
  const extensions = useMemo(
    () => templateEditorExtensions(JSON.parse(propertiesKey) as VariableProperties),
    [propertiesKey],
  );

  return (
    <CodeEditorField
      label={label}
      hint={hint}
      error={error}
      value={value}
      onChange={onChange}
      extensions={extensions}
      placeholder={placeholder}
      minHeight={minHeight}
    />
  );
}
