import { type Application, ApplicationSchema, type CreateApplication } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `POST /app/`: answers 201 with the new application (and its slug). */
export function createApplication(application: CreateApplication): Promise<Application> {
  return apiRequest("/app/", { method: "POST", body: application, schema: ApplicationSchema });
}

export function useCreateApplication() {
  return useInvalidatingMutation(createApplication, applicationsQueryKey);
}
