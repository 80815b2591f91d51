import type { Application } from "@promptmint/contracts";
import { EditorBasicSettingsCard } from "../../components/ui/basic-settings-fields";
import type { WorkflowEditorErrors, WorkflowEditorValues } from "./workflow-editor-values";

export function WorkflowBasicTab(props: {
  /** The saved app: its price now and any announced increase. */
  application: Application;
  values: WorkflowEditorValues;
  errors: WorkflowEditorErrors;
  onChange: (changes: Partial<WorkflowEditorValues>) => void;
}) {
  return <EditorBasicSettingsCard {...props} descriptionPlaceholder="Describe what your workflow does..." />;
}
