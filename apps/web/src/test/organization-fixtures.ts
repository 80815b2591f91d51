import type { Member, Organization } from "@promptmint/contracts";
import { ACTING_ORGANIZATION_STORAGE_KEY, type ActingOrganization } from "../lib/acting-account";
import { ACCESS_TOKEN_STORAGE_KEY } from "../lib/api-client";

export function organizationFixture(overrides: Partial<Organization> = {}): Organization {
  return {
    id: "0b9c1a3e-5d2f-4e8a-9b7c-6d5e4f3a2b1c",
    name: "Acme",
    slug: "acme",
    billing_email: "billing@acme.test",
    billing_address: "1 Main St\nSpringfield",
    tax_id: "",
    created_at: "2025-01-02T10:00:00.000Z",
    role: "developer",
    member_count: 3,
    ...overrides,
  };
}

export function memberFixture(overrides: Partial<Member> = {}): Member {
  return {
    user_id: "u-grace",
    name: "Grace Hopper",
    email: "grace@example.com",
    role: "developer",
    monthly_budget_cents: 5000,
    spent_this_month_micros: 12_345_000,
    joined_at: "2025-01-03T10:00:00.000Z",
    ...overrides,
  };
}

/**
 * Signed in with a session token (so requests carry it, and the acting-account header with it) and,
 * when given, acting for `organization` as a reload would find it.
 */
export function storeSession(organization?: ActingOrganization): void {
  window.localStorage.setItem(ACCESS_TOKEN_STORAGE_KEY, "session-token");
  if (organization)
    window.localStorage.setItem(ACTING_ORGANIZATION_STORAGE_KEY, JSON.stringify(organization));
}
