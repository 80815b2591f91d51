import {
  type WorkflowTestRequestSchema,
  type WorkflowTestResponse,
  WorkflowTestResponseSchema,
} from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";

export type WorkflowTestRequest = z.input<typeof WorkflowTestRequestSchema>;

/**
 * `POST /app/{slug}/workflow/test-config/`: the server calls the provider for real with these
 * settings; masked secrets are replaced by the stored ones first.
 */
export function testWorkflowConfig(
  slug: string,
  request: WorkflowTestRequest,
): Promise<WorkflowTestResponse> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/workflow/test-config/`, {
    method: "POST",
    body: request,
    schema: WorkflowTestResponseSchema,
  });
}

export function useTestWorkflowConfig(slug: string) {
  return useMutation({ mutationFn: (request: WorkflowTestRequest) => testWorkflowConfig(slug, request) });
}
