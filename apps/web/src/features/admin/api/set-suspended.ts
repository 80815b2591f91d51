import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { adminOverviewQueryKey } from "./get-admin-overview";
import { auditQueryKey } from "./list-audit-entries";

export type SuspensionTarget = { kind: "apps" | "users"; id: string; suspended: boolean };

/** `POST /admin/{apps|users}/{id}/{suspend|unsuspend}`: suspends the target or lifts its suspension. */
export async function setSuspended(target: SuspensionTarget, reason: string): Promise<void> {
  const verb = target.suspended ? "unsuspend" : "suspend";
  await apiRequest(`/admin/${target.kind}/${target.id}/${verb}`, { method: "POST", body: { reason } });
}

/** The overview lists suspensions and the audit log records each change: both are read again. */
export function useSetSuspended(target: SuspensionTarget) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (reason: string) => setSuspended(target, reason),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: adminOverviewQueryKey });
      await queryClient.invalidateQueries({ queryKey: auditQueryKey });
    },
  });
}
