import type { Application } from "@promptmint/contracts";
import { useState } from "react";
import { SelectField, type SelectOption } from "./select-field";

// SPEC §2: the client-side filters of the prompt and workflow lists.
const VISIBILITY_FILTERS: readonly SelectOption[] = [
  { value: "all", label: "All Visibility" },
  { value: "private", label: "Private" },
  { value: "public", label: "Public" },
  { value: "embed", label: "Embed" },
];

const STATUS_FILTERS: readonly SelectOption[] = [
  { value: "all", label: "All Status" },
  { value: "draft", label: "Draft" },
  { value: "live", label: "Live" },
  { value: "archived", label: "Archived" },
];

export interface ApplicationFilterState {
  visibility: string;
  status: string;
  setVisibility(value: string): void;
  setStatus(value: string): void;
}

/** The chosen visibility and status, and the applications that match them. */
export function useApplicationFilters<T extends Pick<Application, "visibility" | "status">>(
  apps: readonly T[],
) {
  const [visibility, setVisibility] = useState("all");
  const [status, setStatus] = useState("all");
  const shown = apps.filter(
    (app) =>
      (visibility === "all" || app.visibility === visibility) && (status === "all" || app.status === status),
  );
  return {
    filters: { visibility, status, setVisibility, setStatus } satisfies ApplicationFilterState,
    shown,
  };
}

export function ApplicationFilters({ filters }: { filters: ApplicationFilterState }) {
  return (
    <div className="mb-6 grid gap-3 sm:flex sm:flex-wrap">
      {[
        {
          label: "Visibility",
          options: VISIBILITY_FILTERS,
          value: filters.visibility,
          set: filters.setVisibility,
        },
        { label: "Status", options: STATUS_FILTERS, value: filters.status, set: filters.setStatus },
      ].map(({ label, options, value, set }) => (
        <SelectField
          key={label}
          label={label}
          className="sm:w-48"
          options={options}
          value={value}
          onChange={(event) => set(event.target.value)}
        />
      ))}
    </div>
  );
}
