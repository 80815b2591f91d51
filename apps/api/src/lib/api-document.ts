import { ApiErrorSchema } from "@promptmint/contracts";

/**
 * The OpenAPI document people and client generators read (/api/openapi.json, /api/docs): the API
 * under /api only, the paid endpoints first. The issuer's pages and the web app's files are routes
 * too, but not an API anyone integrates with; the security suite still classifies them, from the
 * complete document (`?internal=true`).
 */

/** A route's error answers for its schema's `response`, each an ApiError body: `errorResponses(400, 404)`. */
export function errorResponses<const Code extends number>(
  ...codes: Code[]
): Record<Code, typeof ApiErrorSchema> {
  return Object.fromEntries(codes.map((code) => [code, ApiErrorSchema])) as Record<
    Code,
    typeof ApiErrorSchema
  >;
}

/** Tags in the order the docs list them: what integrators come for first. */
export const API_TAGS = [
  { name: "gateway", description: "Call an app: Dify-compatible service API (`/api/app/{slug}/…`)." },
  { name: "openai", description: "Call an app with OpenAI clients: `baseURL` `/api/v1`, model = app slug." },
  {
    name: "mcp",
    description: "Call apps as MCP tools: `/api/app/{slug}/mcp` (one app), `/api/mcp` (the catalogue).",
  },
  { name: "explore", description: "Public apps and their prices." },
  {
    name: "reviews",
    description: "Ratings and reviews of public apps, written by people who paid for them (decision 081).",
  },
  { name: "keys", description: "Your API keys." },
  {
    name: "organizations",
    description:
      "Organizations: accounts a team buys and sells as, their members, roles, invitations, usage by member and audit log. Act for one with the `Promptmint-Organization` header.",
  },
  { name: "billing", description: "Wallet, top-ups, plans and subscriptions." },
  {
    name: "promotions",
    description:
      "Free trials (N calls per consumer) and promotion codes (credit on a creator's apps), paid by the creator.",
  },
  { name: "applications", description: "Create and manage your apps." },
  { name: "prompts", description: "Prompt templates and model settings." },
  {
    name: "experiments",
    description: "Split a prompt's traffic between versions; each arm's revenue, margin and significance.",
  },
  {
    name: "evals-api",
    description:
      "Run an app's eval cases from CI with an API key of its owner (`npx promptmint eval <app> --version v7`).",
  },
  {
    name: "online-evals",
    description:
      "Online evaluation: assertions run on a sampled share of live calls, judges paid by the creator under a daily cap.",
  },
  {
    name: "rollouts",
    description:
      "Guarded rollouts: a version's share grows by steps (5% → 25% → 100%) within bounds, rolled back by itself.",
  },
  { name: "workflows", description: "Workflow providers (Dify, n8n, Flowise, webhooks)." },
  { name: "models", description: "Models, their prices, and your own model keys." },
  { name: "analytics", description: "Calls, revenue and margins." },
  { name: "payouts", description: "Getting paid: Stripe Connect and payouts." },
  { name: "embed", description: "The embeddable widget." },
  { name: "packaging", description: "The downloadable front-end app." },
  { name: "creators", description: "Creators' public profiles." },
  { name: "auth", description: "Your profile and sessions." },
  { name: "admin", description: "Operators only." },
  { name: "system", description: "Health and configuration." },
];

interface Document {
  paths?: Record<string, Record<string, { tags?: string[] }>>;
  tags?: unknown;
  [key: string]: unknown;
}

/** The complete document reduced to /api paths, ordered by their first tag's place in API_TAGS. */
export function publicApiDocument<T extends Document>(complete: T): T {
  const rank = (operations: Record<string, { tags?: string[] }>) => {
    const ranks = Object.values(operations).map((operation) => {
      const index = API_TAGS.findIndex((tag) => tag.name === operation.tags?.[0]);
      return index === -1 ? API_TAGS.length : index;
    });
    return Math.min(...ranks);
  };
  const paths = Object.entries(complete.paths ?? {})
    .filter(([path]) => path.startsWith("/api/"))
    .map((entry, position) => ({ entry, position, rank: rank(entry[1]) }))
    .sort((a, b) => a.rank - b.rank || a.position - b.position)
    .map(({ entry }) => entry);
  return { ...complete, paths: Object.fromEntries(paths) };
}
