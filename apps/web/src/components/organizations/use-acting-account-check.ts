import { useEffect } from "react";
import { useActingOrganization, useSwitchAccount, writeActingOrganization } from "../../lib/acting-account";
import { useOrganizations } from "../../lib/organizations-query";

/**
 * Keeps the acting account true to the server: an organization the person no longer belongs to
 * (removed, or it is gone) gives way to their personal account, with a toast saying so; a changed
 * role or name is taken over, so the nav hides and names what it should.
 */
export function useActingAccountCheck(signedIn: boolean): void {
  const acting = useActingOrganization();
  const organizations = useOrganizations({ enabled: signedIn && acting !== null });
  const switchAccount = useSwitchAccount();
  const list = organizations.data;

  useEffect(() => {
    if (!acting || !list) return;
    const current = list.find((organization) => organization.id === acting.id);
    if (!current) {
      switchAccount(null);
      // The toast library loads with the first screen that needs it (docs/decisions/016).
      void import("sonner").then(({ toast }) =>
        toast.warning(`You are no longer a member of ${acting.name}: acting as your personal account.`),
      );
      return;
    }
    if (current.role !== acting.role || current.name !== acting.name)
      writeActingOrganization({ id: current.id, name: current.name, role: current.role });
  }, [acting, list, switchAccount]);
}
