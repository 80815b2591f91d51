import { BILLING_COUNTRIES, BillingAddressSchema } from "@promptmint/contracts";
import { useState } from "react";
import type { z } from "zod";
import type { CardEntry } from "../ui/card-entry";
import { SelectField } from "../ui/select-field";
import { TextField } from "../ui/text-field";

export type BillingAddress = z.output<typeof BillingAddressSchema>;
type Country = (typeof BILLING_COUNTRIES)[number];

/** What the person typed; `parseBillingAddress` checks it against the contract. */
export interface BillingAddressValues {
  name: string;
  line1: string;
  line2: string;
  city: string;
  state: string;
  postal_code: string;
  country: Country;
}

export type BillingAddressErrors = Partial<Record<keyof BillingAddressValues, string>>;

export const EMPTY_BILLING_ADDRESS: BillingAddressValues = {
  name: "",
  line1: "",
  line2: "",
  city: "",
  state: "",
  postal_code: "",
  country: "US",
};

const COUNTRY_NAMES: Record<Country, string> = {
  US: "United States",
  CA: "Canada",
  GB: "United Kingdom",
  AU: "Australia",
  DE: "Germany",
  FR: "France",
  ES: "Spain",
  IT: "Italy",
  NL: "Netherlands",
};

/** SPEC §5: only these countries can be billed. */
const COUNTRY_OPTIONS = BILLING_COUNTRIES.map((code) => ({ value: code, label: COUNTRY_NAMES[code] }));

const REQUIRED_MESSAGES: Partial<Record<keyof BillingAddressValues, string>> = {
  name: "Name is required",
  line1: "Address is required",
  city: "City is required",
  postal_code: "Postal code is required",
};

/** The address as the API takes it (optional lines left out when blank), or what is missing. */
export function parseBillingAddress(
  values: BillingAddressValues,
): { address: BillingAddress; errors?: undefined } | { address?: undefined; errors: BillingAddressErrors } {
  const result = BillingAddressSchema.safeParse({
    ...values,
    line2: values.line2.trim() || undefined,
    state: values.state.trim() || undefined,
  });
  if (result.success) return { address: result.data };
  const errors: BillingAddressErrors = {};
  for (const issue of result.error.issues) {
    const field = issue.path[0] as keyof BillingAddressValues;
    errors[field] ??= REQUIRED_MESSAGES[field] ?? issue.message;
  }
  return { errors };
}

/** An address being entered: what was typed, its errors, and its check on submit. */
export function useBillingAddressEntry() {
  const [values, setValues] = useState(EMPTY_BILLING_ADDRESS);
  const [errors, setErrors] = useState<BillingAddressErrors>({});
  return {
    values,
    errors,
    setValues,
    /** The address as the API takes it, or undefined once its fields show what is missing. */
    parse: () => {
      const parsed = parseBillingAddress(values);
      setErrors(parsed.errors ?? {});
      return parsed.address;
    },
  };
}

/**
 * What a Stripe payment form sends: the billing address and Stripe's card Element. Null when the
 * address shows what is wrong, or when Stripe has not loaded (then `onNotLoaded` says so).
 */
export function readStripeEntry(
  card: CardEntry,
  address: ReturnType<typeof useBillingAddressEntry>,
  onNotLoaded: () => void,
) {
  const billingAddress = address.parse();
  if (!billingAddress) return null;
  const stripeCard = card.getStripeCard();
  if (!stripeCard) {
    onNotLoaded();
    return null;
  }
  return { billingAddress, stripeCard };
}
export function BillingAddressFields({
  entry,
  disabled,
}: {
  entry: ReturnType<typeof useBillingAddressEntry>;
  disabled?: boolean;
}) {
  const { values, errors, setValues: onChange } = entry;
  const field = (name: keyof BillingAddressValues) => ({
    value: values[name],
    error: errors[name],
    disabled,
    onChange: (event: { target: { value: string } }) => onChange({ ...values, [name]: event.target.value }),
  });

  return (
    <fieldset className="space-y-4">
      <legend className="mb-3 text-sm font-semibold text-slate-900">Billing address</legend>
      <TextField label="Name on card" autoComplete="cc-name" required {...field("name")} />
      <TextField label="Address line 1" autoComplete="address-line1" required {...field("line1")} />
      <TextField label="Address line 2 (optional)" autoComplete="address-line2" {...field("line2")} />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField label="City" autoComplete="address-level2" required {...field("city")} />
        <TextField label="State / Province (optional)" autoComplete="address-level1" {...field("state")} />
      </div>
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField label="Postal code" autoComplete="postal-code" required {...field("postal_code")} />
        <SelectField label="Country" autoComplete="country" options={COUNTRY_OPTIONS} {...field("country")} />
      </div>
    </fieldset>
  );
}
