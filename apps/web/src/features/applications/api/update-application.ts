import { type Application, ApplicationSchema, type UpdateApplication } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `PATCH /app/{slug}/`. */
export function updateApplication(slug: string, update: UpdateApplication): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/`, {
    method: "PATCH",
    body: update,
    schema: ApplicationSchema,
  });
}

export function useUpdateApplication(slug: string) {
  return useInvalidatingMutation(
    (update: UpdateApplication) => updateApplication(slug, update),
    applicationsQueryKey,
  );
}
