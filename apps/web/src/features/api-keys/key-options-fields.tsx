import type { ApiKey, LimitReset, UpdateApiKey } from "@promptmint/contracts";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";

/** A key's options as the form holds them (text as typed), for creating and editing a key. */
export interface KeyOptionsDraft {
  limit: string;
  reset: LimitReset;
  expires: string;
  apps: string;
}

/** Problems by the API's field names, so the server's 400 `fields` land on the same inputs. */
export type KeyOptionErrors = Partial<
  Record<"spend_limit_cents" | "limit_reset" | "expires_at" | "allowed_apps", string>
>;

type KeyOptions = Required<Omit<UpdateApiKey, "name">>;

const RESETS: { value: LimitReset; label: string }[] = [
  { value: "daily", label: "Daily (UTC day)" },
  { value: "weekly", label: "Weekly (UTC, from Monday)" },
  { value: "monthly", label: "Monthly (UTC calendar month)" },
  { value: "never", label: "Never (a total budget)" },
];

export function draftOf(key?: ApiKey): KeyOptionsDraft {
  return {
    limit: key?.spend_limit_cents ? (key.spend_limit_cents / 100).toFixed(2) : "",
    reset: key?.limit_reset ?? "monthly",
    expires: key?.expires_at?.slice(0, 10) ?? "",
    apps: key?.allowed_apps?.join(", ") ?? "",
  };
}

/** The draft as the API's options (empty fields clear them), or the problems to show. */
export function parseDraft(draft: KeyOptionsDraft): { options: KeyOptions } | { errors: KeyOptionErrors } {
  const errors: KeyOptionErrors = {};
  const limit = draft.limit.trim().replace(/^\$/, "");
  let cents: number | null = null;
  if (limit !== "") {
    if (!/^\d+(\.\d{1,2})?$/.test(limit) || Number(limit) <= 0)
      errors.spend_limit_cents = "Enter an amount in dollars, e.g. 5.00";
    else cents = Math.round(Number(limit) * 100);
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    options: {
      spend_limit_cents: cents,
      limit_reset: draft.reset,
      expires_at: draft.expires ? `${draft.expires}T00:00:00.000Z` : null,
      allowed_apps: draft.apps
        .split(",")
        .map((slug) => slug.trim())
        .filter(Boolean),
    },
  };
}

/** Spend limit, its reset, expiry and allowed apps: native inputs, usable from the keyboard and on a phone. */
export function KeyOptionsFields({
  draft,
  onChange,
  errors,
}: {
  draft: KeyOptionsDraft;
  onChange: (draft: KeyOptionsDraft) => void;
  errors: KeyOptionErrors;
}) {
  const set = (changes: Partial<KeyOptionsDraft>) => onChange({ ...draft, ...changes });
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      <TextField
        label="Spend limit ($)"
        inputMode="decimal"
        autoComplete="off"
        placeholder="No limit"
        hint="The most this key may spend from your wallet per period; empty for no limit."
        value={draft.limit}
        error={errors.spend_limit_cents}
        onChange={(event) => set({ limit: event.target.value })}
      />
      <SelectField
        label="Limit resets"
        options={RESETS}
        hint="Periods are UTC: days start at 00:00 UTC."
        value={draft.reset}
        error={errors.limit_reset}
        onChange={(event) => set({ reset: event.target.value as LimitReset })}
      />
      <TextField
        label="Expires on"
        type="date"
        hint="The key stops working at 00:00 UTC on this date; empty for never."
        value={draft.expires}
        error={errors.expires_at}
        onChange={(event) => set({ expires: event.target.value })}
      />
      <TextField
        label="Allowed apps"
        autoComplete="off"
        placeholder="All apps"
        hint="App slugs separated by commas; empty for every app."
        value={draft.apps}
        error={errors.allowed_apps}
        onChange={(event) => set({ apps: event.target.value })}
      />
    </div>
  );
}
