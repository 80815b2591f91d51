import { type CreateApiKey, type CreatedApiKey, CreatedApiKeySchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { apiKeysQueryKey } from "./list-api-keys";

/** `POST /keys/`: answers 201 with the full key, the only time it is ever shown. */
export function createApiKey(input: CreateApiKey): Promise<CreatedApiKey> {
  return apiRequest("/keys/", { method: "POST", body: input, schema: CreatedApiKeySchema });
}

export function useCreateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createApiKey,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeysQueryKey }),
  });
}
