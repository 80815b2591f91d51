import type { AppStatus, AppType, InteractionMode } from "@promptmint/contracts";
import type { SelectOption } from "../../components/ui/select-field";

// The choices of SPEC §2 as the forms of this feature label them.

export const APP_TYPE_OPTIONS: readonly (SelectOption & { value: AppType })[] = [
  { value: "prompt", label: "Prompt - A prompt template with model settings" },
  { value: "workflow", label: "Workflow - An external workflow provider" },
];

export const INTERACTION_MODE_OPTIONS: readonly (SelectOption & { value: InteractionMode })[] = [
  { value: "completion", label: "Text Completion" },
  { value: "chat", label: "Chat Conversation" },
];

export const STATUS_ACTIONS: readonly { status: AppStatus; label: string }[] = [
  { status: "draft", label: "Set as Draft" },
  { status: "live", label: "Set as Live" },
  { status: "archived", label: "Archive" },
];
