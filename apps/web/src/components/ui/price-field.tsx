import type { Application } from "@promptmint/contracts";
import { formatCents, priceChangeHint } from "../../lib/format";
import { TextField, type TextFieldProps } from "./text-field";

/** SPEC §2 and §5: prices are typed in cents, except in the prompt builder, which takes dollars. */
export type PriceUnit = "cents" | "dollars";

/** SPEC §5: a cents entry that is not a whole number counts as 0 (and then meets the minimum, if any). */
export function centsOfEntry(value: unknown): number {
  const cents = Number.parseInt(String(value ?? ""), 10);
  return Number.isNaN(cents) ? 0 : cents;
}

/**
 * A typed price in the other unit, so nobody misreads which one the field takes: `= $1.50 per
 * call` under cents (a non-number counts as 0, as SPEC §5 saves it), `= 26¢ per call` under
 * dollars (rounded as it is saved; nothing while the entry is not a positive amount).
 */
export function priceEquivalent(unit: PriceUnit, typed: string | number): string | undefined {
  const text = String(typed);
  if (unit === "cents") return `= ${formatCents(centsOfEntry(text))} per call`;
  const dollars = Number(text);
  if (!text.trim() || !Number.isFinite(dollars) || dollars <= 0) return undefined;
  return `= ${Math.round(dollars * 100)}¢ per call`;
}

export interface PriceFieldProps
  extends Omit<TextFieldProps, "type" | "inputMode" | "step" | "label" | "hint"> {
  unit: PriceUnit;
  /** What is typed, when the input is not controlled through `value` (react-hook-form). */
  amount?: string | number;
  /** Defaults to SPEC's `Price per Call (cents)` / `Price per Call (USD)`. */
  label?: string;
  /** Said after the equivalent: an announced increase, how a change applies. */
  note?: string | null;
}

/** The price-per-call input of every app form, with what the entry is in the other unit under it. */
export function PriceField({ unit, amount, label, note, value, ...inputProps }: PriceFieldProps) {
  const equivalent = priceEquivalent(unit, amount ?? (value as string | number | undefined) ?? "");
  const hint = [equivalent, note].filter(Boolean).join(". ") || undefined;
  return (
    <TextField
      label={label ?? (unit === "cents" ? "Price per Call (cents)" : "Price per Call (USD)")}
      type="number"
      inputMode={unit === "cents" ? "numeric" : "decimal"}
      step={unit === "cents" ? 1 : 0.01}
      value={value}
      hint={hint}
      {...inputProps}
    />
  );
}

/**
 * The editors' price (prompt and workflow, SPEC §5): cents, at least 0, a non-number saved as 0,
 * with the increase the saved app has announced, if any.
 */
export function editorPriceProps(
  application: Application,
  cents: number,
  error: string | undefined,
  onChange: (cents: number) => void,
): PriceFieldProps {
  return {
    unit: "cents",
    min: 0,
    value: String(cents),
    error,
    note: priceChangeHint(application, " per call"),
    onChange: (event) => onChange(centsOfEntry(event.target.value)),
  };
}
