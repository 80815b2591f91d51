import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey, applicationsQueryKey } from "../../../lib/applications-query";

/** `DELETE /app/{slug}/`: answers 204. */
export async function deleteApplication(slug: string): Promise<void> {
  await apiRequest(`/app/${encodeURIComponent(slug)}/`, { method: "DELETE" });
}

export function useDeleteApplication() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteApplication,
    onSuccess: (_result, slug) => {
      // The deleted app's own queries would only answer 404 now.
      queryClient.removeQueries({ queryKey: applicationQueryKey(slug) });
      return queryClient.invalidateQueries({ queryKey: applicationsQueryKey });
    },
  });
}
