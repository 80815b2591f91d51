import type {
  Application,
  WorkflowConfig,
  WorkflowProvider,
  WorkflowTestResponse,
} from "@promptmint/contracts";
import { stubSignedInApi } from "./api-stubs";
import { createTestAuth } from "./auth-state";
import { jsonResponse } from "./fetch-stub";
import { applicationFixture } from "./fixtures";
import { renderRoute } from "./render-route";

// Test data for the workflow screens: providers shaped like the seeded ones, one of each field kind.

export const difyProvider: WorkflowProvider = {
  id: "provider-dify",
  slug: "dify",
  name: "Dify",
  description: "Dify chat, completion and workflow apps.",
  supports_streaming: true,
  config_schema: {
    type: "object",
    properties: {
      base_url: {
        title: "Base URL",
        description: "The Dify API root.",
        type: "string",
        format: "uri",
        default: "https://api.dify.ai/v1",
      },
      api_key: { title: "App API Key", description: "The app's API key.", type: "string", secret: true },
      app_type: {
        title: "App Type",
        description: "Which Dify endpoint to call.",
        type: "string",
        enum: ["chat", "completion", "workflow"],
        default: "chat",
      },
    },
    required: ["base_url", "api_key"],
  },
};

export const n8nProvider: WorkflowProvider = {
  id: "provider-n8n",
  slug: "n8n",
  name: "n8n",
  description: "An n8n workflow behind a webhook trigger.",
  supports_streaming: false,
  config_schema: {
    type: "object",
    properties: {
      webhook_url: { title: "Webhook URL", description: "The trigger's production URL.", type: "string" },
      header_password: { title: "Header Password", description: "Optional header auth.", type: "string" },
      retries: { title: "Retries", description: "Attempts on failure.", type: "number", default: 2 },
      wait_for_result: { title: "Wait for Result", description: "", type: "boolean", default: true },
    },
    required: ["webhook_url"],
  },
};

export const flowiseProvider: WorkflowProvider = {
  id: "provider-flowise",
  slug: "flowise",
  name: "Flowise",
  description: "A Flowise chatflow.",
  supports_streaming: false,
  config_schema: { type: "object", properties: {}, required: [] },
};

export const workflowProviders = [difyProvider, n8nProvider, flowiseProvider];

export function workflowConfigFixture(overrides: Partial<WorkflowConfig> = {}): WorkflowConfig {
  return {
    id: "workflow-1",
    application_slug: "support-flow",
    provider: difyProvider,
    provider_config: { base_url: "https://dify.example.com/v1", api_key: "••••abcd", app_type: "completion" },
    timeout_seconds: 300,
    max_iterations: 10,
    enable_logging: true,
    current_version: 1,
    production_version: 1,
    labels: [
      { name: "production", version: 1, moved_at: "2026-01-01T00:00:00.000Z", moved_by_name: "creator" },
      { name: "latest", version: 1, moved_at: "2026-01-01T00:00:00.000Z", moved_by_name: null },
    ],
    ...overrides,
  };
}

export function workflowTestResultFixture(
  overrides: Partial<WorkflowTestResponse> = {},
): WorkflowTestResponse {
  return {
    success: true,
    message: "Connected to Dify",
    error: null,
    app_info: { name: "Support Bot", mode: "chat" },
    ...overrides,
  };
}

type Handlers = Parameters<typeof stubSignedInApi>[0];

/** A signed-in creator's API with one workflow app, `support-flow`, set up on Dify. */
export function stubWorkflowApi(
  handlers: Handlers = {},
  {
    application = applicationFixture({ slug: "support-flow", name: "Support Flow", type: "workflow" }),
    config = workflowConfigFixture(),
    providers = workflowProviders,
  }: { application?: Application; config?: WorkflowConfig; providers?: WorkflowProvider[] } = {},
) {
  return stubSignedInApi({
    "GET /api/app/support-flow/": () => jsonResponse(application),
    "GET /api/app/support-flow/workflow/": () => jsonResponse(config),
    "GET /api/workflow-providers/": () => jsonResponse(providers),
    ...handlers,
  });
}

export function renderWorkflowEditor() {
  return renderRoute("/workflows/support-flow", { auth: createTestAuth("signed-in") });
}
