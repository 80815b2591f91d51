import type { AppStatus, AppType, InteractionMode, Visibility } from "@promptmint/contracts";
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

export const VISIBILITY_OPTIONS: readonly (SelectOption & { value: Visibility })[] = [
  { value: "private", label: "Private - Only you can access" },
  { value: "public", label: "Public - Anyone can discover and use" },
  { value: "embed", label: "Embed - Can be embedded in other websites" },
];

export const STATUS_ACTIONS: readonly { status: AppStatus; label: string }[] = [
  { status: "draft", label: "Set as Draft" },
  { status: "live", label: "Set as Live" },
  { status: "archived", label: "Archive" },
];

/** SPEC §5: a price entry that is not a number counts as 0 (and then fails the minimum). */
export function centsFromInput(value: unknown): number {
  const cents = Number.parseInt(String(value ?? ""), 10);
  return Number.isNaN(cents) ? 0 : cents;
}
