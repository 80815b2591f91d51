import { type Application, ApplicationSchema, type CreateApplication } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** `POST /app/`: answers 201 with the new application (and its slug). */
export function createApplication(application: CreateApplication): Promise<Application> {
  return apiRequest("/app/", { method: "POST", body: application, schema: ApplicationSchema });
}

export function useCreateApplication() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createApplication,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
  });
}
