import { type Application, ApplicationSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** `POST /app/{slug}/duplicate/`: answers 201 with the copy (and its own slug). */
export function duplicateApplication(slug: string): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/duplicate/`, {
    method: "POST",
    schema: ApplicationSchema,
  });
}

export function useDuplicateApplication() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: duplicateApplication,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
  });
}
