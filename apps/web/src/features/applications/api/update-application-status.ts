import { type Application, ApplicationSchema, type AppStatus } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `PATCH /app/{slug}/update_status/`. */
export function updateApplicationStatus(slug: string, status: AppStatus): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/update_status/`, {
    method: "PATCH",
    body: { status },
    schema: ApplicationSchema,
  });
}

export function useUpdateApplicationStatus(slug: string) {
  return useInvalidatingMutation(
    (status: AppStatus) => updateApplicationStatus(slug, status),
    applicationsQueryKey,
  );
}
