import {
  type TestConfigRequest,
  type TestConfigResponse,
  TestConfigResponseSchema,
} from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/**
 * Renders a template with test inputs: `POST /app/{slug}/prompt/test-config/` for a saved app,
 * `POST /prompts/test-config/` before the app exists.
 */
export function testPromptConfig(
  slug: string | undefined,
  request: TestConfigRequest,
): Promise<TestConfigResponse> {
  const path = slug ? `/app/${encodeURIComponent(slug)}/prompt/test-config/` : "/prompts/test-config/";
  return apiRequest(path, { method: "POST", body: request, schema: TestConfigResponseSchema });
}

export function useTestPromptConfig(slug: string | undefined) {
  return useMutation({ mutationFn: (request: TestConfigRequest) => testPromptConfig(slug, request) });
}
