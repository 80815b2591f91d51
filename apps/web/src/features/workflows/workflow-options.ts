import type { AppStatus, Visibility } from "@promptmint/contracts";
import type { SelectOption } from "../../components/ui/select-field";

// The choices of SPEC §2 as the workflow screens label them.

export const STATUS_OPTIONS: readonly (SelectOption & { value: AppStatus })[] = [
  { value: "draft", label: "Draft" },
  { value: "live", label: "Live" },
  { value: "archived", label: "Archived" },
];

export const VISIBILITY_OPTIONS: readonly (SelectOption & { value: Visibility })[] = [
  { value: "private", label: "Private - Only you can access" },
  { value: "public", label: "Public - Anyone can discover and use" },
  { value: "embed", label: "Embed - Can be embedded in other websites" },
];
