import type { ActingOrganization } from "../../lib/acting-account";

/** The acting account as the nav says it: "Personal", or "Acme · developer". */
export function actingAccountText(organization: ActingOrganization | null): string {
  return organization ? `${organization.name} · ${organization.role}` : "Personal";
}
