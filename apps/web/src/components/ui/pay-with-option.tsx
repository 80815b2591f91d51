import type { LucideIcon } from "lucide-react";
import { useId } from "react";
import { cn } from "../../lib/cn";

/**
 * `saved`: a card saved earlier (with Stripe it is charged each period by Stripe Billing);
 * `wallet`: the Promptmint wallet's balance; `apple_pay`, `google_pay`: the device's wallet
 * (components/ui/device-wallets.tsx, decision 083).
 */
export type PayWith = "saved" | "card" | "wallet" | "apple_pay" | "google_pay";

/** What tells one way to pay from another. */
export interface PayWithChoice {
  value: PayWith;
  icon: LucideIcon;
  label: string;
  detail: string;
}

/** One choice of the checkout's 'Pay with' radio group, drawn as a selectable tile. */
export function PayWithOption({
  value,
  current,
  onChange,
  disabled,
  icon: Icon,
  label,
  detail,
}: PayWithChoice & {
  current: PayWith;
  onChange: (value: PayWith) => void;
  disabled: boolean;
}) {
  const checked = value === current;
  const detailId = useId();
  return (
    <label
      className={cn(
        "relative flex cursor-pointer items-start gap-3 rounded-lg border p-3 text-sm transition-colors has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-brand-600",
        checked ? "border-brand-600 bg-brand-50" : "border-slate-200 hover:bg-slate-50",
      )}
    >
      <input
        type="radio"
        name="pay-with"
        value={value}
        checked={checked}
        disabled={disabled}
        onChange={() => onChange(value)}
        aria-label={label}
        aria-describedby={detailId}
        className="sr-only"
      />
      <Icon
        className={cn("mt-0.5 size-4", checked ? "text-brand-600" : "text-slate-400")}
        aria-hidden="true"
      />
      <span>
        <span className="block font-medium text-slate-900">{label}</span>
        <span id={detailId} className="block text-xs text-slate-500">
          {detail}
        </span>
      </span>
    </label>
  );
}
