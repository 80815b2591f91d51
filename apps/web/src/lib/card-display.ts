import type { PaymentMethod } from "@promptmint/contracts";

const BRAND_NAMES: Record<string, string> = {
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  discover: "Discover",
};

export function cardBrandName(brand: string): string {
  return (
    BRAND_NAMES[brand.toLowerCase()] ?? (brand ? brand.charAt(0).toUpperCase() + brand.slice(1) : "Card")
  );
}

/** SPEC §2: the month padded to two digits, then the year: `03/2030`. */
export function formatCardExpiry(method: Pick<PaymentMethod, "card_exp_month" | "card_exp_year">): string {
  return `${String(method.card_exp_month).padStart(2, "0")}/${method.card_exp_year}`;
}
