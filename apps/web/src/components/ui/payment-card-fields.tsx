import type { SandboxCard } from "../../lib/sandbox-payments";
import { TextField } from "./text-field";

/** What the person typed; `parseCardFields` turns it into the card the sandbox confirms. */
export interface CardFieldValues {
  number: string;
  expiry: string;
  cvc: string;
}

export type CardFieldErrors = Partial<Record<keyof CardFieldValues, string>>;

export const EMPTY_CARD: CardFieldValues = { number: "", expiry: "", cvc: "" };

/** Groups the digits by four as they are typed: `4242 4242 4242 4242`. */
function formatCardNumber(value: string): string {
  const digits = value.replace(/\D/g, "").slice(0, 19);
  return digits.replace(/(\d{4})(?=\d)/g, "$1 ");
}

/** `MM/YY` or `MM/YYYY` (slash optional) → month and four-digit year. */
function parseExpiry(value: string): { month: number; year: number } | null {
  const match = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!match?.[1] || !match[2]) return null;
  const month = Number(match[1]);
  const year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return null;
  return { month, year };
}

export function parseCardFields(
  values: CardFieldValues,
): { card: SandboxCard; errors?: undefined } | { card?: undefined; errors: CardFieldErrors } {
  const errors: CardFieldErrors = {};
  const digits = values.number.replace(/\s/g, "");
  if (digits === "") errors.number = "Card number is required";
  else if (!/^\d{12,19}$/.test(digits)) errors.number = "Enter a valid card number";
  const expiry = parseExpiry(values.expiry);
  if (!expiry) errors.expiry = "Enter the expiry date as MM/YY";
  if (!/^\d{3,4}$/.test(values.cvc.trim())) errors.cvc = "Enter the 3 or 4 digit security code";
  if (!expiry || Object.keys(errors).length > 0) return { errors };
  return {
    card: { number: digits, exp_month: expiry.month, exp_year: expiry.year, cvc: values.cvc.trim() },
  };
}

/** Expiry and CVC, side by side under the card number; the CVC keeps digits only. */
const SHORT_FIELDS = [
  {
    name: "expiry",
    label: "Expiry (MM/YY)",
    autoComplete: "cc-exp",
    placeholder: "12/34",
    maxLength: 7,
    clean: (typed: string) => typed,
  },
  {
    name: "cvc",
    label: "CVC",
    autoComplete: "cc-csc",
    placeholder: "123",
    maxLength: 4,
    clean: (typed: string) => typed.replace(/\D/g, ""),
  },
] as const;

/** Card number, expiry and CVC, labelled and autocompleted like a checkout form. */
export function PaymentCardFields({
  values,
  errors = {},
  disabled,
  onChange,
}: {
  values: CardFieldValues;
  errors?: CardFieldErrors;
  disabled?: boolean;
  onChange: (values: CardFieldValues) => void;
}) {
  return (
    <div className="grid grid-cols-2 gap-4">
      <TextField
        label="Card number"
        className="col-span-2"
        inputMode="numeric"
        autoComplete="cc-number"
        placeholder="4242 4242 4242 4242"
        value={values.number}
        error={errors.number}
        disabled={disabled}
        onChange={(event) => onChange({ ...values, number: formatCardNumber(event.target.value) })}
      />
      {SHORT_FIELDS.map(({ name, clean, ...field }) => (
        <TextField
          key={name}
          {...field}
          inputMode="numeric"
          value={values[name]}
          error={errors[name]}
          disabled={disabled}
          onChange={(event) => onChange({ ...values, [name]: clean(event.target.value) })}
        />
      ))}
    </div>
  );
}
