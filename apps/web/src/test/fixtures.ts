import type {
  ApiKey,
  Application,
  ExploreApp,
  ExploreAppDetail,
  GatewayResponse,
  MoneyFigures,
  Profile,
  PromptConfig,
  RuntimeConfig,
  TestConfigResponse,
} from "@promptmint/contracts";

/** The model settings a new prompt starts from, as the API receives them. */
export const DEFAULT_MODEL_SETTINGS = {
  model: "gpt-4-turbo",
  temperature: 0.7,
  max_tokens: 2048,
  top_p: 1,
  frequency_penalty: 0,
  presence_penalty: 0,
};

export function profileFixture(
  overrides: { creator?: Profile["creator"]; emailVerified?: boolean } = {},
): Profile {
  return {
    user: {
      id: "5f8d0d55-1a2b-4c3d-8e9f-0123456789ab",
      username: "ada",
      email: "ada@example.com",
      first_name: "Ada",
      last_name: "Lovelace",
      display_name: "Ada L.",
      is_active: true,
      date_joined: "2024-03-15T10:00:00.000Z",
      email_verified: overrides.emailVerified ?? true,
    },
    creator:
      overrides.creator === undefined
        ? { id: "c-1", display_name: "Ada L.", plan: "pro", credits: 1500 }
        : overrides.creator,
  };
}

export function runtimeConfigFixture(oidc: Partial<RuntimeConfig["oidc"]> = {}): RuntimeConfig {
  return {
    public_url: "http://localhost:3000",
    oidc: {
      issuer: "http://localhost:3000/oidc",
      client_id: "promptmint-web",
      audience: null,
      scope: "openid profile email offline_access",
      embedded: true,
      ...oidc,
    },
    sandbox: { llm: true, payments: true },
    stripe_publishable_key: null,
  };
}

export function applicationFixture(overrides: Partial<Application> = {}): Application {
  const slug = overrides.slug ?? "blog-writer";
  return {
    id: `app-${slug}`,
    name: "Blog Writer",
    slug,
    description: "Writes blog posts about any topic.",
    type: "prompt",
    interaction_mode: "completion",
    visibility: "private",
    status: "draft",
    price_cents: 150,
    pending_price_cents: null,
    pending_price_at: null,
    allow_tools: false,
    provider_config: null,
    created_at: "2024-05-01T10:00:00.000Z",
    updated_at: "2024-05-02T10:00:00.000Z",
    creator_name: "Ada L.",
    ...overrides,
  };
}

export function promptConfigFixture(overrides: Partial<PromptConfig> = {}): PromptConfig {
  const version = {
    id: "version-2",
    version: 2,
    system_prompt: "You are a helpful writer.",
    prompt_template: "Write about {{topic}}.",
    input_schema: {
      type: "object" as const,
      properties: { topic: { type: "string" as const, description: "What to write about" } },
      required: ["topic"],
      additionalProperties: false as const,
    },
    output_schema: null,
    changelog: "Updated via UI",
    created_at: "2024-05-02T10:00:00.000Z",
    is_active: true,
    model: "gpt-4-turbo",
    temperature: 0.7,
    max_tokens: 2048,
    top_p: 1,
    frequency_penalty: 0,
    presence_penalty: 0,
    author_name: "ada",
    labels: ["production", "latest"],
  };
  return {
    id: "prompt-1",
    application_slug: "blog-writer",
    model: "gpt-4-turbo",
    model_keys: "platform",
    temperature: 0.7,
    max_tokens: 2048,
    top_p: 1,
    frequency_penalty: 0,
    presence_penalty: 0,
    current_version: 2,
    active_version: version,
    latest_version: version,
    production_version: 2,
    labels: [
      { name: "production", version: 2, moved_at: "2024-05-02T10:00:00.000Z", moved_by_name: "ada" },
      { name: "latest", version: 2, moved_at: "2024-05-02T10:00:00.000Z", moved_by_name: null },
    ],
    ...overrides,
  };
}

export function testConfigResultFixture(overrides: Partial<TestConfigResponse> = {}): TestConfigResponse {
  return {
    success: true,
    message: "Template rendered successfully",
    error: null,
    rendered_template: "Write about Sample topic.",
    detected_variables: ["topic"],
    run: null,
    ...overrides,
  };
}

export function apiKeyFixture(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id: "key-1",
    name: "Production server",
    prefix: "pm_a1b2c3",
    created_at: "2024-05-01T10:00:00.000Z",
    last_used_at: null,
    spend_limit_cents: null,
    limit_reset: "never",
    expires_at: null,
    allowed_apps: null,
    spent_micros: 0,
    period_resets_at: null,
    made_by: null,
    ...overrides,
  };
}

export function gatewayResponseFixture(overrides: Partial<GatewayResponse> = {}): GatewayResponse {
  return {
    event: "message",
    id: "msg-1",
    message_id: "msg-1",
    task_id: "task-1",
    mode: "completion",
    answer: "Here is a post about tea.",
    metadata: {
      usage: {
        prompt_tokens: 12,
        completion_tokens: 30,
        total_tokens: 42,
        input_tokens: 12,
        output_tokens: 30,
        latency: 0.5,
        total_price: "0.0500000",
        currency: "USD",
        charged_cents: 5,
        paid_by: "wallet",
      },
    },
    created_at: 1714557600,
    ...overrides,
  };
}

export function exploreAppFixture(overrides: Partial<ExploreApp> = {}): ExploreApp {
  return {
    name: "Haiku Writer",
    slug: "haiku-writer",
    description: "A haiku about any topic.",
    type: "prompt",
    interaction_mode: "completion",
    price_cents: 5,
    pending_price_cents: null,
    pending_price_at: null,
    creator_name: "Ada L.",
    updated_at: "2026-01-02T10:00:00.000Z",
    accepts_tools: false,
    rating: { average: 4.5, count: 12 },
    health: { calls_30d: 1250, enough_calls: true, uptime: 0.996, error_rate: 0.012, median_latency_ms: 840 },
    ...overrides,
  };
}

export function exploreAppDetailFixture(overrides: Partial<ExploreAppDetail> = {}): ExploreAppDetail {
  return {
    ...exploreAppFixture(),
    input_schema: {
      type: "object",
      properties: { topic: { type: "string", description: "Topic", maxLength: 40 } },
      required: ["topic"],
      additionalProperties: false,
    },
    takes_query: false,
    plans: [],
    max_input_tokens: 12_345,
    ...overrides,
  };
}

/**
 * Money figures over a window (docs/decisions/029): a platform fee of 10% and no model cost unless
 * told, net = gross − fee − model cost.
 */
export function moneyFiguresFixture(
  { gross_micros = 0, fee_micros, model_cost_micros = 0 }: Partial<MoneyFigures> = {},
  days = 30,
): MoneyFigures {
  const fee = fee_micros ?? Math.round(gross_micros / 10);
  return {
    period_days: days,
    period: `Last ${days} days`,
    gross_micros,
    fee_micros: fee,
    model_cost_micros,
    net_micros: gross_micros - fee - model_cost_micros,
  };
}

/** An app's usage as the dashboard and detail page read it, its figures from its gross. */
export function appUsageTotalsFixture(total_invocations: number, total_revenue: number) {
  return {
    total_invocations,
    total_revenue,
    figures: moneyFiguresFixture({ gross_micros: Math.round(total_revenue * 1_000_000) }),
  };
}
