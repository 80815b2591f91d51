import { type Application, ApplicationSchema, type UpdateApplication } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** `PATCH /app/{slug}/`. */
export function updateApplication(slug: string, update: UpdateApplication): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/`, {
    method: "PATCH",
    body: update,
    schema: ApplicationSchema,
  });
}

export function useUpdateApplication(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (update: UpdateApplication) => updateApplication(slug, update),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
  });
}
