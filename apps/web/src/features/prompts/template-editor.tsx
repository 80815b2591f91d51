import type { IoSchema } from "@promptmint/contracts";
import { useMemo } from "react";
import { CodeEditorField, type CodeEditorFieldProps } from "./code-editor";
import { templateEditorExtensions, type VariableProperties } from "./template-editor-extensions";

/**
 * A prompt editor with `{{variable}}` highlighting, completion of the input schema's variables
 * after `{{`, and hover help on a variable.
 */
export function TemplateEditor({
  inputSchema,
  ...field
}: Omit<CodeEditorFieldProps, "extensions"> & { inputSchema: IoSchema }) {
  // Keyed by content: a schema rebuilt with the same fields must not reset the editor's features.
  const propertiesKey = JSON.stringify(inputSchema.properties);
  const extensions = useMemo(
    () => templateEditorExtensions(JSON.parse(propertiesKey) as VariableProperties),
    [propertiesKey],
  );
  return <CodeEditorField {...field} extensions={extensions} />;
}
