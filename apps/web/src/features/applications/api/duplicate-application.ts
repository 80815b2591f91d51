import { type Application, ApplicationSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `POST /app/{slug}/duplicate/`: answers 201 with the copy (and its own slug). */
export function duplicateApplication(slug: string): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/duplicate/`, {
    method: "POST",
    schema: ApplicationSchema,
  });
}

export function useDuplicateApplication() {
  return useInvalidatingMutation(duplicateApplication, applicationsQueryKey);
}
