import { type Application, ApplicationSchema, type AppStatus } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** `PATCH /app/{slug}/update_status/`. */
export function updateApplicationStatus(slug: string, status: AppStatus): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/update_status/`, {
    method: "PATCH",
    body: { status },
    schema: ApplicationSchema,
  });
}

export function useUpdateApplicationStatus(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (status: AppStatus) => updateApplicationStatus(slug, status),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
  });
}
