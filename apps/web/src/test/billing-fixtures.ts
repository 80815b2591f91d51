import type { Package, PaymentMethod, Subscription, Wallet, WalletTransaction } from "@promptmint/contracts";

export function packageFixture(overrides: Partial<Package> = {}): Package {
  const priceCents = overrides.price_cents ?? (overrides.price !== undefined ? overrides.price * 100 : 500);
  return {
    id: "plan-pro",
    name: "Pro",
    price: priceCents / 100,
    price_cents: priceCents,
    pending_price_cents: null,
    pending_price_at: null,
    currency: "usd",
    description: "For teams calling every day.",
    features: { Support: "Email" },
    included_calls: 100,
    period_days: 30,
    terms_version: 1,
    terms_effective_from: "2024-05-01T10:00:00.000Z",
    pending_terms: null,
    is_active: true,
    ...overrides,
  };
}

export function subscriptionFixture(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: "sub-1",
    package_id: "plan-pro",
    package_name: "Pro",
    application_slug: "my-app",
    status: "active",
    cancel_at_period_end: false,
    renews_from: "wallet",
    current_period_start: "2024-05-01T10:00:00.000Z",
    current_period_end: "2024-05-31T10:00:00.000Z",
    days_remaining: 12,
    calls_used: 3,
    calls_included: 100,
    terms: null,
    next_terms: null,
    ...overrides,
  };
}

export function paymentMethodFixture(overrides: Partial<PaymentMethod> = {}): PaymentMethod {
  return {
    id: "pm-1",
    card_brand: "visa",
    card_last4: "4242",
    card_exp_month: 3,
    card_exp_year: 2030,
    is_default: true,
    ...overrides,
  };
}

export function walletTransactionFixture(overrides: Partial<WalletTransaction> = {}): WalletTransaction {
  return {
    id: "tx-1",
    kind: "top_up",
    amount_micros: 10_000_000,
    account: "wallet",
    description: "Wallet top-up (card •••• 4242)",
    created_at: "2024-05-02T10:00:00.000Z",
    ...overrides,
  };
}

export function walletFixture(overrides: Partial<Wallet> = {}): Wallet {
  return {
    currency: "usd",
    balance_micros: 10_000_000,
    held_micros: 0,
    earnings_micros: 0,
    gateway: "sandbox",
    transactions: [],
    ...overrides,
  };
}
