import type { EmbedSettings } from "@promptmint/contracts";
import { Save } from "lucide-react";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents } from "../../lib/format";
import { useUpdateEmbedSettings } from "./api/update-embed-settings";

type LimitField = "daily_cap_cents" | "visitor_calls_per_hour" | "visitor_calls_per_day";

function fieldErrors(error: unknown): Partial<Record<LimitField, string>> {
  return error instanceof ApiClientError && error.fields ? error.fields : {};
}

/** Today's embedded spend against the daily cap, and the limits that keep a script from draining the wallet. */
export function EmbedSpendingForm({ slug, settings }: { slug: string; settings: EmbedSettings }) {
  const update = useUpdateEmbedSettings(slug);
  const [capDollars, setCapDollars] = useState((settings.daily_cap_cents / 100).toFixed(2));
  const [perHour, setPerHour] = useState(String(settings.visitor_calls_per_hour));
  const [perDay, setPerDay] = useState(String(settings.visitor_calls_per_day));
  const [capError, setCapError] = useState<string>();
  const { daily_cap_cents: cap, spent_today_cents: spent } = settings;
  const capReached = spent >= cap || spent + settings.price_cents > cap;
  const errors = fieldErrors(update.error);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const cents = Math.round(Number(capDollars) * 100);
    if (capDollars.trim() === "" || !Number.isFinite(cents) || cents < 0) {
      setCapError("Enter an amount in dollars, 0 or more");
      return;
    }
    setCapError(undefined);
    update.mutate(
      {
        daily_cap_cents: cents,
        visitor_calls_per_hour: Number(perHour),
        visitor_calls_per_day: Number(perDay),
      },
      { onSuccess: () => toast.success("Spending limits saved") },
    );
  };

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      <h3 className="text-sm font-medium text-slate-700">Spending limits</h3>
      <div className="space-y-1.5">
        <p className="text-sm text-slate-700">
          Spent today (UTC): <strong>{formatCents(spent)}</strong> of your {formatCents(cap)} daily cap
        </p>
        <div className="h-2 overflow-hidden rounded-full bg-slate-100" aria-hidden="true">
          <div
            className={capReached ? "h-full bg-amber-500" : "h-full bg-brand-600"}
            style={{ width: `${cap > 0 ? Math.min(100, (spent / cap) * 100) : 100}%` }}
          />
        </div>
      </div>
      {capReached && (
        <Alert tone="warning" role="note">
          The daily cap is reached: until 00:00 UTC the widget tells visitors it has reached its limit for
          today. Raise the cap to let them continue.
        </Alert>
      )}
      {update.isError && Object.keys(errors).length === 0 && (
        <Alert tone="error">{getErrorMessage(update.error)}</Alert>
      )}
      <div className="grid gap-3 sm:grid-cols-3">
        <TextField
          label="Daily spending cap (USD)"
          type="number"
          min={0}
          step={0.01}
          hint="0 turns the widget off."
          error={capError ?? errors.daily_cap_cents}
          value={capDollars}
          onChange={(event) => setCapDollars(event.target.value)}
        />
        {[
          {
            label: "Calls per visitor per hour",
            value: perHour,
            set: setPerHour,
            error: errors.visitor_calls_per_hour,
          },
          {
            label: "Calls per visitor per day",
            value: perDay,
            set: setPerDay,
            error: errors.visitor_calls_per_day,
          },
        ].map(({ label, value, set, error }) => (
          <TextField
            key={label}
            label={label}
            type="number"
            min={1}
            step={1}
            error={error}
            value={value}
            onChange={(event) => set(event.target.value)}
          />
        ))}
      </div>
      <p className="text-xs text-slate-500">
        A visitor is each widget load and, separately, each visitor address: reloading the page does not reset
        the count.
      </p>
      <Button type="submit" size="sm" busy={update.isPending}>
        {!update.isPending && <Save className="size-4" aria-hidden="true" />}
        {update.isPending ? "Saving..." : "Save Spending Limits"}
      </Button>
    </form>
  );
}
