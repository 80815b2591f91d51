import { billingAddress, card, type World } from "./world.ts";

/**
 * Who may call a route (DESIGN.md §5):
 * - public: anyone, credentials or not;
 * - issuer: the embedded OIDC issuer, which authenticates with its own cookies: a bearer
 *   credential must change nothing;
 * - token: any valid access token for our audience (sign-in bookkeeping);
 * - self: any signed-in user, about their own data; API keys are not accepted;
 * - owned: only the owner of the resource; everyone else signed in gets 404;
 * - gateway: a paid endpoint of a private app: its owner by token or API key; others 404;
 * - gateway-any: a gateway endpoint every valid token or API key may call.
 * - admin: the platform's operators (the operator role; in the world, the owner, verified and
 *   granted through the ADMIN_EMAILS bootstrap) by token; any other
 *   signed-in user 403; API keys are not accepted.
 */
export type RouteClass =
  | "public"
  | "issuer"
  | "token"
  | "self"
  | "owned"
  | "gateway"
  | "gateway-any"
  | "admin";

export interface RouteRequest {
  class: RouteClass;
  /** The concrete URL the matrix calls, with the world's real ids. */
  url: string;
  payload?: string | object;
  headers?: Record<string, string>;
  /** The success status for the callers the class allows (default 200). */
  ok?: number;
  /**
   * Where a caller's status differs from the class rule, and why (see the comment). `member`: an
   * organization's member whose role may use the route, acting for it (the matrix's rules).
   */
  expect?: Partial<Record<string, number>>;
  /** Changes state the other routes rely on (deletes): run after the rest. */
  last?: boolean;
  /** Ends the caller's sessions (sign-out): run after everything else, once. */
  signsOut?: boolean;
}

const boundary = "----promptmint-security";
/** An id no row has: the owner's answer is a 404 like everyone else's. */
const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";
const upload = {
  payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
  headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
};

/** An MCP client's request (Streamable HTTP): a JSON-RPC message, answers accepted in JSON or SSE. */
const mcpRequest = {
  payload: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
  headers: { accept: "application/json, text/event-stream" },
};

const everyMethod = ["GET", "HEAD", "TRACE", "DELETE", "OPTIONS", "PATCH", "PUT", "POST", "QUERY"];
/** The issuer's routes, their methods and a URL to try each with. */
const issuerRoutes: [path: string, methods: string[], url: string][] = [
  ["/oidc/assets/{name}", ["GET"], "/oidc/assets/sign-in.css"],
  ["/oidc/interaction/{uid}", ["GET"], "/oidc/interaction/no-such-uid"],
  ["/oidc/interaction/{uid}/login", ["POST"], "/oidc/interaction/no-such-uid/login"],
  ["/oidc/interaction/{uid}/register", ["POST"], "/oidc/interaction/no-such-uid/register"],
  ["/oidc/interaction/{uid}/consent", ["POST"], "/oidc/interaction/no-such-uid/consent"],
  ["/oidc/verify-email", ["GET", "POST"], "/oidc/verify-email?token=not-a-real-token-0123456789"],
  ["/oidc/password/forgot", ["GET", "POST"], "/oidc/password/forgot"],
  ["/oidc/password/reset", ["GET", "POST"], "/oidc/password/reset?token=not-a-real-token-0123456789"],
  // The development outbox (no SMTP_URL, never in production), as the world's server has it.
  ["/oidc/dev/outbox", ["GET"], "/oidc/dev/outbox"],
  ["/oidc/dev/outbox.json", ["GET"], "/oidc/dev/outbox.json"],
  ["/oidc", everyMethod, "/oidc"],
  ["/oidc/{*}", everyMethod, "/oidc/.well-known/openid-configuration"],
];

/** Every documented route ("METHOD /path" as in /api/openapi.json) with a request that succeeds for its rightful caller. */
export function routeTable(world: World): Record<string, RouteRequest> {
  const app = `/api/app/${world.promptApp.slug}`;
  const chatApp = `/api/app/${world.chatApp.slug}`;
  const runApp = `/api/app/${world.runApp.slug}`;
  const flow = `/api/app/${world.workflowApp.slug}`;
  const other = `/api/app/${world.otherApp.slug}`;
  const organization = `/api/organizations/${world.organization.id}`;
  const table: Record<string, RouteRequest> = {
    "GET /api/config": { class: "public", url: "/api/config" },
    "GET /api/explore/apps": { class: "public", url: "/api/explore/apps?q=public" },
    "GET /api/explore/apps/{slug}": { class: "public", url: `/api/explore/apps/${world.otherApp.slug}` },
    // Reviews (decision 081): anyone reads them; the owner bought a plan of the other's app and may
    // review it; the other owns it and is refused (403 naming why). API keys are no sign-in here.
    "GET /api/explore/apps/{slug}/reviews": {
      class: "public",
      url: `/api/explore/apps/${world.otherApp.slug}/reviews`,
    },
    "GET /api/explore/apps/{slug}/reviews/mine": {
      class: "self",
      url: `/api/explore/apps/${world.otherApp.slug}/reviews/mine`,
    },
    "PUT /api/explore/apps/{slug}/reviews/mine": {
      class: "self",
      url: `/api/explore/apps/${world.otherApp.slug}/reviews/mine`,
      payload: { rating: 4, body: "Does what it says." },
      // Nor did the world's organization buy a plan of it.
      expect: { other: 403, member: 403 },
    },
    "DELETE /api/explore/apps/{slug}/reviews/mine": {
      class: "self",
      url: `/api/explore/apps/${world.otherApp.slug}/reviews/mine`,
      ok: 204,
      // The other never wrote one (they own the app), nor did the organization.
      expect: { other: 404, member: 404 },
      last: true,
    },
    // Only the app's creator may reply; no review has this id, so the creator's answer is a 404 too.
    "PUT /api/explore/apps/{slug}/reviews/{id}/reply": {
      class: "owned",
      url: `/api/explore/apps/${world.otherApp.slug}/reviews/${NO_SUCH_ID}/reply`,
      payload: { reply: "Thank you!" },
      ok: 404,
    },
    // Try it is for signed-in people (a session token), never an API key.
    "POST /api/explore/apps/{slug}/try": {
      class: "self",
      url: `/api/explore/apps/${world.otherApp.slug}/try`,
      payload: { query: "Hello from the matrix" },
      // The organization's wallet is empty (the other's app is free to try for its owner).
      expect: { member: 402 },
    },
    // Widget calls authenticate with an embed token only: a bearer credential is no credential there.
    "POST /api/embed/{slug}/messages": {
      class: "public",
      url: `/api/embed/${world.otherApp.slug}/messages`,
      payload: { query: "hi" },
      ok: 401,
    },
    "GET /api/app/{slug}/embed": { class: "owned", url: `${app}/embed` },
    "PUT /api/app/{slug}/embed": {
      class: "owned",
      url: `${app}/embed`,
      payload: { allowed_origins: ["https://shop.example.com"] },
    },
    "GET /api/app/{slug}/download-frontend": { class: "owned", url: `${app}/download-frontend` },
    "POST /api/billing/stripe/webhook": {
      // No Stripe on this server: 404 for everyone, and a signature would be needed anyway.
      class: "public",
      url: "/api/billing/stripe/webhook",
      payload: { type: "payment_intent.succeeded" },
      ok: 404,
    },

    "POST /api/auth/login/": { class: "token", url: "/api/auth/login/" },
    "POST /api/auth/register/": { class: "token", url: "/api/auth/register/" },
    "POST /api/auth/logout/": { class: "token", url: "/api/auth/logout/", signsOut: true },
    "GET /api/auth/profile/": { class: "self", url: "/api/auth/profile/" },
    "PATCH /api/auth/profile/": {
      class: "self",
      url: "/api/auth/profile/",
      payload: { user: { first_name: "Same" } },
    },
    "GET /api/auth/roles/": { class: "self", url: "/api/auth/roles/" },
    // The owner's address is verified (nothing to send); the other's link went out at sign-up,
    // moments ago, so another is refused for a minute.
    "POST /api/auth/verification-email/": {
      class: "self",
      url: "/api/auth/verification-email/",
      expect: { other: 429 },
    },
    "GET /api/creators/": { class: "self", url: "/api/creators/" },
    "GET /api/creators/me/": { class: "self", url: "/api/creators/me/" },

    "GET /api/keys/": { class: "self", url: "/api/keys/" },
    "POST /api/keys/": { class: "self", url: "/api/keys/", payload: { name: "matrix" }, ok: 201 },
    "PATCH /api/keys/{id}/": {
      class: "owned",
      url: `/api/keys/${world.spareKey.id}/`,
      payload: { name: "spare", spend_limit_cents: 500, limit_reset: "daily" },
    },
    "DELETE /api/keys/{id}/": {
      class: "owned",
      url: `/api/keys/${world.spareKey.id}/`,
      ok: 204,
      last: true,
    },

    // Organizations (decision 084): the person's own routes. Those under /api/organizations/{id}/
    // answer its members (the owner; the other is none: 404); an API key is no sign-in here.
    "GET /api/organizations/": { class: "self", url: "/api/organizations/" },
    "POST /api/organizations/": {
      class: "self",
      url: "/api/organizations/",
      payload: { name: "Matrix Org" },
      ok: 201,
    },
    "GET /api/organizations/{id}/": { class: "owned", url: `${organization}/` },
    "PATCH /api/organizations/{id}/": { class: "owned", url: `${organization}/`, payload: { tax_id: "GB1" } },
    "GET /api/organizations/{id}/members/": { class: "owned", url: `${organization}/members/` },
    "PATCH /api/organizations/{id}/members/{user_id}/": {
      class: "owned",
      url: `${organization}/members/${world.organization.memberId}/`,
      payload: { monthly_budget_cents: 1_000 },
    },
    "DELETE /api/organizations/{id}/members/{user_id}/": {
      class: "owned",
      url: `${organization}/members/${world.organization.memberId}/`,
      ok: 204,
      last: true,
    },
    "GET /api/organizations/{id}/invitations/": { class: "owned", url: `${organization}/invitations/` },
    // Inviting the same address again replaces its pending invitation: 201 each time.
    "POST /api/organizations/{id}/invitations/": {
      class: "owned",
      url: `${organization}/invitations/`,
      payload: { email: "matrix-invitee@example.test", role: "viewer" },
      ok: 201,
    },
    "DELETE /api/organizations/{id}/invitations/{invitation_id}/": {
      class: "owned",
      url: `${organization}/invitations/${world.organization.spareInvitationId}/`,
      ok: 204,
      last: true,
    },
    "GET /api/organizations/{id}/audit/": { class: "owned", url: `${organization}/audit/?page=1` },
    // The other's organization invited the owner: anyone signed in who holds the link reads it;
    // only the invited address accepts (the other: 403 naming it).
    "GET /api/invitations/{token}/": {
      class: "self",
      url: `/api/invitations/${world.organization.invitationToken}/`,
    },
    "POST /api/invitations/{token}/accept/": {
      class: "self",
      url: `/api/invitations/${world.organization.invitationToken}/accept/`,
      // Only the invited address accepts: the other, and every organization's people, 403 naming it.
      expect: { other: 403, member: 403 },
      last: true,
    },
    // An organization's usage (issue 43): its members who see its money; anyone else 404.
    "GET /api/organizations/{id}/usage/": {
      class: "owned",
      url: `/api/organizations/${world.organization.id}/usage/`,
    },

    // Webhooks (docs/decisions/068): anyone signed in keeps their own endpoints; another's are 404.
    "GET /api/webhooks/event-types/": { class: "public", url: "/api/webhooks/event-types/" },
    "GET /api/webhooks/endpoints/": { class: "self", url: "/api/webhooks/endpoints/" },
    "POST /api/webhooks/endpoints/": {
      class: "self",
      url: "/api/webhooks/endpoints/",
      payload: { url: "http://127.0.0.1:9/matrix", event_types: ["call.charged"] },
      ok: 201,
    },
    "PATCH /api/webhooks/endpoints/{id}/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.webhookEndpointId}/`,
      payload: { description: "matrix" },
    },
    "GET /api/webhooks/endpoints/{id}/secret/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.webhookEndpointId}/secret/`,
    },
    "POST /api/webhooks/endpoints/{id}/rotate-secret/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.webhookEndpointId}/rotate-secret/`,
      payload: {},
    },
    "POST /api/webhooks/endpoints/{id}/test/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.webhookEndpointId}/test/`,
    },
    "GET /api/webhooks/endpoints/{id}/deliveries/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.webhookEndpointId}/deliveries/`,
    },
    "POST /api/webhooks/deliveries/{id}/redeliver/": {
      class: "owned",
      url: `/api/webhooks/deliveries/${world.webhookDeliveryId}/redeliver/`,
    },
    "DELETE /api/webhooks/endpoints/{id}/": {
      class: "owned",
      url: `/api/webhooks/endpoints/${world.spareWebhookEndpointId}/`,
      ok: 204,
      last: true,
    },

    "GET /api/analytics/dashboard/": { class: "self", url: "/api/analytics/dashboard/" },
    "GET /api/analytics/figures/": { class: "self", url: "/api/analytics/figures/" },
    "GET /api/analytics/figures/versions/": { class: "self", url: "/api/analytics/figures/versions/" },
    "GET /api/app/{slug}/analytics/usage/": { class: "owned", url: `${app}/analytics/usage/?days=7` },
    "GET /api/app/{slug}/analytics/performance/": {
      class: "owned",
      url: `${app}/analytics/performance/?days=7`,
    },
    "GET /api/app/{slug}/analytics/invocations/": {
      class: "owned",
      url: `${app}/analytics/invocations/?limit=5`,
    },

    "GET /api/app/": { class: "self", url: "/api/app/" },
    "POST /api/app/": { class: "self", url: "/api/app/", payload: { name: "Matrix App" }, ok: 201 },
    "GET /api/app/{slug}/": { class: "owned", url: `${app}/` },
    "PATCH /api/app/{slug}/": { class: "owned", url: `${app}/`, payload: { description: "Owned" } },
    "DELETE /api/app/{slug}/": {
      class: "owned",
      url: `/api/app/${world.spareApp.slug}/`,
      ok: 204,
      last: true,
    },
    "POST /api/app/{slug}/duplicate/": { class: "owned", url: `${app}/duplicate/`, ok: 201 },
    "PATCH /api/app/{slug}/update_status/": {
      class: "owned",
      url: `${app}/update_status/`,
      payload: { status: "live" },
    },
    "PATCH /api/app/{slug}/prompt-application/": {
      class: "owned",
      url: `${app}/prompt-application/`,
      payload: { application: { description: "Owned" }, prompt: { prompt_template: "Say {{query}}" } },
    },
    "POST /api/app/{slug}/file-upload/": { class: "owned", url: `${app}/file-upload/`, ...upload, ok: 201 },

    "GET /api/models/": { class: "self", url: "/api/models/" },
    "GET /api/prompt-apps/starter/": { class: "self", url: "/api/prompt-apps/starter/" },
    "GET /api/app/{slug}/prompt/": { class: "owned", url: `${app}/prompt/` },
    "PATCH /api/app/{slug}/prompt/": {
      class: "owned",
      url: `${app}/prompt/`,
      payload: { prompt_template: "Say {{query}}" },
    },
    "POST /api/app/{slug}/prompt/test-config/": {
      class: "owned",
      url: `${app}/prompt/test-config/`,
      payload: { prompt_template: "Say {{query}}", test_inputs: { query: "hi" } },
    },
    "POST /api/prompts/test-config/": {
      class: "self",
      url: "/api/prompts/test-config/",
      payload: { prompt_template: "Say {{query}}", test_inputs: { query: "hi" } },
    },
    "GET /api/prompts/{id}/versions/": { class: "owned", url: `/api/prompts/${world.promptId}/versions/` },
    "POST /api/prompts/{id}/versions/": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/versions/`,
      payload: { version_id: world.promptVersionId },
    },
    // Labels (decision 057): the owner points staging at version 1; `spare` is removed last.
    "GET /api/prompts/{id}/labels/": { class: "owned", url: `/api/prompts/${world.promptId}/labels/` },
    "PUT /api/prompts/{id}/labels/{name}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/labels/staging`,
      payload: { version: 1 },
    },
    "DELETE /api/prompts/{id}/labels/{name}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/labels/spare`,
      last: true,
    },
    // Online evals (decision 076): the owner's settings with a pattern RE2 cannot run are a 400 naming it.
    "GET /api/prompts/{id}/online-evals": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/online-evals`,
    },
    "PUT /api/prompts/{id}/online-evals": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/online-evals`,
      payload: {
        enabled: true,
        sample_percent: 10,
        assertions: [{ kind: "regex", pattern: "(?<=a)b" }],
        daily_cap_cents: 100,
      },
      ok: 400,
    },
    // Experiments (decision 058): the owner's start with one version twice is a 400 naming the arm;
    // an experiment that does not exist is a 404 for the owner too, as for everyone else.
    // What callers get (decision 075): production and the running experiment, the owner's alone.
    "GET /api/prompts/{id}/serving": { class: "owned", url: `/api/prompts/${world.promptId}/serving` },
    "GET /api/workflows/{id}/serving": { class: "owned", url: `/api/workflows/${world.workflowId}/serving` },
    "GET /api/prompts/{id}/experiments/": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/`,
    },
    "POST /api/prompts/{id}/experiments/": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/`,
      payload: {
        arms: [
          { version: 1, percent: 50 },
          { version: 1, percent: 50 },
        ],
      },
      ok: 400,
    },
    "GET /api/prompts/{id}/experiments/{eid}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/00000000-0000-4000-8000-000000000000`,
      ok: 404,
    },
    "POST /api/prompts/{id}/experiments/{eid}/stop": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/00000000-0000-4000-8000-000000000000/stop`,
      payload: {},
      ok: 404,
    },
    "POST /api/prompts/{id}/experiments/{eid}/promote": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/00000000-0000-4000-8000-000000000000/promote`,
      payload: { version: 1 },
      ok: 404,
    },
    "POST /api/prompts/{id}/experiments/{eid}/rollback": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/experiments/00000000-0000-4000-8000-000000000000/rollback`,
      payload: {},
      ok: 404,
    },
    // Evals (docs/decisions/059). The world has no eval run: ids are unknown (404 to the owner
    // too), and a run is asked of a version the prompt lacks (400 naming it), so no model runs.
    "POST /api/prompts/{id}/evals/runs": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/runs`,
      payload: { version: 999 },
      ok: 400,
    },
    // Decision 062: what a run may cost, from the owner's wallet; a version the prompt lacks is a 400.
    "GET /api/prompts/{id}/evals/estimate": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/estimate?version=999`,
      ok: 400,
    },
    // Decision 078: a live call saved as an eval case; the world's id is of no call (404 to the owner too).
    "POST /api/prompts/{id}/evals/cases/from-call": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/cases/from-call`,
      payload: { invocation_id: NO_SUCH_ID },
      ok: 404,
    },
    // Decision 078: evals from CI, the owner by token or API key (others 404, as a paid call of a
    // private app); a version the prompt lacks is a 400 naming it, so no model runs.
    "POST /api/apps/{slug}/evals/runs": {
      class: "gateway",
      url: `/api/apps/${world.promptApp.slug}/evals/runs`,
      payload: { version: 999 },
      ok: 400,
    },
    "GET /api/prompts/{id}/evals/cases": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/cases`,
    },
    "POST /api/prompts/{id}/evals/cases": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/cases`,
      payload: { name: "Says hi", inputs: { query: "hi" }, assertions: [{ kind: "contains", value: "hi" }] },
      ok: 201,
    },
    "PATCH /api/prompts/{id}/evals/cases/{cid}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/cases/${NO_SUCH_ID}`,
      payload: { name: "Renamed" },
      ok: 404,
    },
    "DELETE /api/prompts/{id}/evals/cases/{cid}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/cases/${NO_SUCH_ID}`,
      ok: 404,
    },
    "PATCH /api/prompts/{id}/evals/settings": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/settings`,
      payload: { require_passing_eval: false },
    },
    "GET /api/prompts/{id}/evals/runs": { class: "owned", url: `/api/prompts/${world.promptId}/evals/runs` },
    "GET /api/prompts/{id}/evals/runs/{rid}": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/runs/${NO_SUCH_ID}`,
      ok: 404,
    },
    "GET /api/prompts/{id}/evals/compare": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/evals/compare?a=${NO_SUCH_ID}&b=${NO_SUCH_ID}`,
      ok: 404,
    },
    // Evals of a workflow app (decision 059, "Workflow apps"): the same routes and shapes as a
    // prompt app's, named by the workflow's id; the same unknown ids and versions, so nothing runs.
    "POST /api/workflows/{id}/evals/runs": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/runs`,
      payload: { version: 999 },
      ok: 400,
    },
    "GET /api/workflows/{id}/evals/estimate": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/estimate?version=999`,
      ok: 400,
    },
    "POST /api/workflows/{id}/evals/cases/from-call": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/cases/from-call`,
      payload: { invocation_id: NO_SUCH_ID },
      ok: 404,
    },
    "GET /api/workflows/{id}/evals/cases": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/cases`,
    },
    "POST /api/workflows/{id}/evals/cases": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/cases`,
      payload: { name: "Says hi", inputs: { topic: "hi" }, assertions: [{ kind: "contains", value: "hi" }] },
      ok: 201,
    },
    "PATCH /api/workflows/{id}/evals/cases/{cid}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/cases/${NO_SUCH_ID}`,
      payload: { name: "Renamed" },
      ok: 404,
    },
    "DELETE /api/workflows/{id}/evals/cases/{cid}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/cases/${NO_SUCH_ID}`,
      ok: 404,
    },
    // The release gate is a prompt app's (prompts.require_passing_eval): false is accepted, true a 400.
    "PATCH /api/workflows/{id}/evals/settings": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/settings`,
      payload: { require_passing_eval: false },
    },
    "GET /api/workflows/{id}/evals/runs": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/runs`,
    },
    "GET /api/workflows/{id}/evals/runs/{rid}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/runs/${NO_SUCH_ID}`,
      ok: 404,
    },
    "GET /api/workflows/{id}/evals/compare": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/evals/compare?a=${NO_SUCH_ID}&b=${NO_SUCH_ID}`,
      ok: 404,
    },

    "GET /api/workflow-providers/": { class: "self", url: "/api/workflow-providers/" },
    "GET /api/app/{slug}/workflow/": { class: "owned", url: `${flow}/workflow/` },
    "PATCH /api/app/{slug}/workflow/": {
      class: "owned",
      url: `${flow}/workflow/`,
      payload: { timeout_seconds: 30 },
    },
    "POST /api/app/{slug}/workflow/test-config/": {
      class: "owned",
      url: `${flow}/workflow/test-config/`,
      payload: {},
    },
    "GET /api/workflows/{id}/versions/": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/versions/`,
    },
    "POST /api/workflows/{id}/versions/": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/versions/`,
      payload: { version_id: world.workflowVersionId },
    },
    "GET /api/workflows/{id}/labels/": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/labels/`,
    },
    "PUT /api/workflows/{id}/labels/{name}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/labels/staging`,
      payload: { version: 1 },
    },
    "DELETE /api/workflows/{id}/labels/{name}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/labels/spare`,
      last: true,
    },
    // Workflow experiments (decision 058, "Workflow apps"): as the prompt ones, a start with one
    // version twice is the owner's 400 naming the arm; an unknown experiment is a 404 to all.
    "GET /api/workflows/{id}/online-evals": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/online-evals`,
    },
    "PUT /api/workflows/{id}/online-evals": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/online-evals`,
      payload: {
        enabled: true,
        sample_percent: 10,
        assertions: [{ kind: "regex", pattern: "(?<=a)b" }],
        daily_cap_cents: 100,
      },
      ok: 400,
    },
    "GET /api/workflows/{id}/experiments/": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/`,
    },
    "POST /api/workflows/{id}/experiments/": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/`,
      payload: {
        arms: [
          { version: 1, percent: 50 },
          { version: 1, percent: 50 },
        ],
      },
      ok: 400,
    },
    "GET /api/workflows/{id}/experiments/{eid}": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/00000000-0000-4000-8000-000000000000`,
      ok: 404,
    },
    "POST /api/workflows/{id}/experiments/{eid}/stop": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/00000000-0000-4000-8000-000000000000/stop`,
      payload: {},
      ok: 404,
    },
    "POST /api/workflows/{id}/experiments/{eid}/promote": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/00000000-0000-4000-8000-000000000000/promote`,
      payload: { version: 1 },
      ok: 404,
    },
    "POST /api/workflows/{id}/experiments/{eid}/rollback": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/experiments/00000000-0000-4000-8000-000000000000/rollback`,
      payload: {},
      ok: 404,
    },
    // Guarded rollouts (decision 077): rolling out the version production already is (a prompt's
    // v1), or a version the app does not have (a workflow's v999), is the owner's 400 naming
    // `version`; stopping when none runs is a 404 to all.
    "POST /api/prompts/{id}/rollouts": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/rollouts`,
      payload: { version: 1, bounds: { min_calls: 5 } },
      ok: 400,
    },
    "POST /api/prompts/{id}/rollouts/current/stop": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/rollouts/current/stop`,
      payload: {},
      ok: 404,
    },
    "POST /api/prompts/{id}/rollouts/current/advance": {
      class: "owned",
      url: `/api/prompts/${world.promptId}/rollouts/current/advance`,
      payload: {},
      ok: 404,
    },
    "POST /api/workflows/{id}/rollouts": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/rollouts`,
      payload: { version: 999, bounds: { min_calls: 5 } },
      ok: 400,
    },
    "POST /api/workflows/{id}/rollouts/current/stop": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/rollouts/current/stop`,
      payload: {},
      ok: 404,
    },
    "POST /api/workflows/{id}/rollouts/current/advance": {
      class: "owned",
      url: `/api/workflows/${world.workflowId}/rollouts/current/advance`,
      payload: {},
      ok: 404,
    },

    "GET /api/wallet/": { class: "self", url: "/api/wallet/" },
    "GET /api/wallet/statement/": { class: "self", url: "/api/wallet/statement/" },
    "GET /api/wallet/earnings/": { class: "self", url: "/api/wallet/earnings/" },
    "GET /api/wallet/payment-methods/": { class: "self", url: "/api/wallet/payment-methods/" },
    // Receipts and the usage export (docs/decisions/069): each user's own. A receipt's number is
    // given on its user's first listing, so the matrix names one nobody has: 404 to everyone
    // signed in (receipts.test.ts shows the owner's 200 and another's 404).
    "GET /api/receipts/": { class: "self", url: "/api/receipts/" },
    "GET /api/receipts/{number}/html": { class: "self", url: "/api/receipts/PM-999999999/html", ok: 404 },
    "GET /api/receipts/{number}/pdf": { class: "self", url: "/api/receipts/PM-999999999/pdf", ok: 404 },
    "GET /api/usage/export.csv": {
      class: "self",
      url: "/api/usage/export.csv?from=2026-01-01&to=2026-01-31",
    },
    // A creator's own model keys and the price table (docs/decisions/026).
    "GET /api/model-keys": { class: "self", url: "/api/model-keys" },
    "GET /api/model-keys/{provider}": { class: "self", url: "/api/model-keys/openai" },
    "PUT /api/model-keys/{provider}": {
      class: "self",
      url: "/api/model-keys/mistral",
      payload: { api_key: "sk-matrix-mistral-0000" },
    },
    // Every signed-in role set its key above; the deletes run after. The organization's members
    // share its one key: its owner deletes it, the next find none.
    "DELETE /api/model-keys/{provider}": {
      class: "self",
      url: "/api/model-keys/mistral",
      ok: 204,
      expect: { "org-admin": 404, "org-developer": 404 },
      last: true,
    },
    "GET /api/model-prices": { class: "self", url: "/api/model-prices" },
    "POST /api/model-prices/estimate": {
      class: "self",
      url: "/api/model-prices/estimate",
      payload: { model: "gpt-4o-mini", max_tokens: 64, price_cents: 5 },
    },
    // A creator's payouts (docs/decisions/027). Withdrawing before onboarding is refused (409),
    // for whoever may ask.
    "GET /api/payouts/": { class: "self", url: "/api/payouts/" },
    "POST /api/payouts/": {
      class: "self",
      url: "/api/payouts/",
      payload: {},
      headers: { "idempotency-key": "matrix-withdraw" },
      ok: 409,
    },
    // Payouts wait for a verified address: the owner's is, the other's is not (decision 041).
    "POST /api/payouts/onboarding": {
      class: "self",
      url: "/api/payouts/onboarding",
      payload: {},
      // The other's address is not verified yet; for an organization, the acting member's
      // (verified) address is the one proven (decision 084).
      expect: { other: 403 },
    },
    "GET /api/payouts/statement.csv": { class: "self", url: "/api/payouts/statement.csv" },
    "GET /api/payouts/sandbox/clock": { class: "self", url: "/api/payouts/sandbox/clock" },
    "POST /api/payouts/sandbox/clock": {
      class: "self",
      url: "/api/payouts/sandbox/clock",
      payload: { advance_days: 1 },
    },
    "POST /api/wallet/payment-intents/": {
      class: "self",
      url: "/api/wallet/payment-intents/",
      payload: { amount: 500 },
    },
    "POST /api/app/{app}/create-payment-intent/": {
      class: "owned",
      url: `${app}/create-payment-intent/`,
      payload: { amount: 500 },
    },
    "POST /api/billing/sandbox/confirm/": {
      // A client secret that is not the caller's: refused after authentication, never confirmed.
      class: "self",
      url: "/api/billing/sandbox/confirm/",
      payload: { client_secret: "pi_sandbox_nobody_secret_x", card },
      ok: 404,
    },

    // Free trials and promotion codes (decision 080); each route runs twice (/api and /api/v1),
    // so each request is one that answers the same every time. The owner's own app: no trial of
    // one's own (409). A code the world took: taken (409). A code nobody has: not found.
    "GET /api/app/{app}/trial/": { class: "owned", url: `${app}/trial/` },
    "PUT /api/app/{app}/trial/": { class: "owned", url: `${app}/trial/`, payload: { trial_calls: 0 } },
    "POST /api/app/{app}/trial/": { class: "owned", url: `${app}/trial/`, ok: 409 },
    "GET /api/promotion-codes/": { class: "self", url: "/api/promotion-codes/" },
    "POST /api/promotion-codes/": {
      class: "self",
      url: "/api/promotion-codes/",
      payload: { code: world.promotionCode.code, kind: "amount", amount_cents: 100, max_redemptions: 3 },
      ok: 409,
    },
    "DELETE /api/promotion-codes/{id}/": {
      class: "owned",
      url: `/api/promotion-codes/${world.promotionCode.id}/`,
      ok: 204,
      last: true,
    },
    "POST /api/promotion-codes/redeem/": {
      class: "self",
      url: "/api/promotion-codes/redeem/",
      payload: { code: "NO-SUCH-CODE" },
      ok: 404,
    },
    "GET /api/wallet/credits/": { class: "self", url: "/api/wallet/credits/" },

    "GET /api/app/{app}/packages/": { class: "owned", url: `${app}/packages/` },
    "POST /api/app/{app}/packages/": {
      class: "owned",
      url: `${app}/packages/`,
      payload: { name: "Matrix plan", price_cents: 900, included_calls: 10 },
      ok: 201,
    },
    "PATCH /api/app/{app}/packages/{id}/": {
      class: "owned",
      url: `${app}/packages/${world.packageId}/`,
      payload: { description: "Owned" },
    },
    "DELETE /api/app/{app}/packages/{id}/": {
      class: "owned",
      url: `${app}/packages/${world.sparePackageId}/`,
      ok: 204,
      last: true,
    },

    // The owner's subscription to the other creator's public app: the app is visible to both,
    // the subscription only to its subscriber.
    "GET /api/subscriptions/": { class: "self", url: "/api/subscriptions/" },
    "GET /api/app/{app}/subscriptions/": {
      class: "owned",
      url: `${other}/subscriptions/`,
      // The app is public: its creator and the organization see their subscriptions to it (none).
      expect: { other: 200, member: 200 },
    },
    "POST /api/app/{app}/subscriptions/": {
      // Already subscribed (owner) and no subscribing to one's own app (other): both 409.
      class: "owned",
      url: `${other}/subscriptions/`,
      payload: { package_id: "00000000-0000-0000-0000-000000000000" },
      ok: 404,
    },
    "GET /api/app/{app}/subscriptions/{id}/": {
      class: "owned",
      url: `${other}/subscriptions/${world.subscriptionId}/`,
    },
    "PATCH /api/app/{app}/subscriptions/{id}/": {
      class: "owned",
      url: `${other}/subscriptions/${world.subscriptionId}/`,
      payload: { cancel_at_period_end: false },
    },
    "POST /api/app/{app}/subscriptions/{id}/cancel/": {
      class: "owned",
      url: `${other}/subscriptions/${world.subscriptionId}/cancel/`,
      last: true,
    },
    "GET /api/app/{app}/payment-methods/": { class: "self", url: `${other}/payment-methods/` },
    "POST /api/app/{app}/payment-methods/": {
      class: "self",
      url: `${other}/payment-methods/`,
      payload: { billing_address: billingAddress, card },
      ok: 201,
    },
    "PATCH /api/app/{app}/payment-methods/{id}/": {
      class: "owned",
      url: `${other}/payment-methods/${world.cardId}/`,
      payload: { is_default: true },
    },
    "DELETE /api/app/{app}/payment-methods/{id}/": {
      class: "owned",
      url: `${other}/payment-methods/${world.spareCardId}/`,
      ok: 204,
      last: true,
    },

    "POST /api/app/{slug}/completion-messages": {
      class: "gateway",
      url: `${app}/completion-messages`,
      payload: { inputs: { query: "hi" }, user: "matrix" },
    },
    "POST /api/app/{slug}/chat-messages": {
      class: "gateway",
      url: `${chatApp}/chat-messages`,
      payload: { query: "hi", user: "matrix" },
    },
    // Stopping a task that is not running (or is someone else's) changes nothing: Dify's success.
    "POST /api/app/{slug}/completion-messages/{task_id}/stop": {
      class: "gateway",
      url: `${app}/completion-messages/${world.chatMessageId}/stop`,
      payload: { user: "matrix" },
    },
    "POST /api/app/{slug}/chat-messages/{task_id}/stop": {
      class: "gateway",
      url: `${chatApp}/chat-messages/${world.chatMessageId}/stop`,
      payload: { user: "matrix" },
    },
    "GET /api/app/{slug}/parameters": { class: "gateway", url: `${app}/parameters` },
    "GET /api/app/{slug}/info": { class: "gateway", url: `${app}/info` },
    "GET /api/app/{slug}/meta": { class: "gateway", url: `${app}/meta` },
    "GET /api/app/{slug}/site": { class: "gateway", url: `${app}/site` },
    "GET /api/app/{slug}/conversations": { class: "gateway", url: `${chatApp}/conversations?user=matrix` },
    "GET /api/app/{slug}/messages": {
      class: "gateway",
      url: `${chatApp}/messages?user=matrix&conversation_id=${world.conversationId}`,
    },
    "POST /api/app/{slug}/conversations/{conversation_id}/name": {
      class: "gateway",
      url: `${chatApp}/conversations/${world.conversationId}/name`,
      payload: { name: "Renamed", user: "matrix" },
    },
    "GET /api/app/{slug}/conversations/{conversation_id}/variables": {
      class: "gateway",
      url: `${chatApp}/conversations/${world.conversationId}/variables?user=matrix`,
    },
    "DELETE /api/app/{slug}/conversations/{conversation_id}": {
      class: "gateway",
      url: `${chatApp}/conversations/${world.conversationId}`,
      payload: { user: "matrix" },
      ok: 204,
      // The owner's key deleted it just before.
      expect: { owner: 404 },
      last: true,
    },
    "POST /api/app/{slug}/messages/{message_id}/feedbacks": {
      class: "gateway",
      url: `${chatApp}/messages/${world.chatMessageId}/feedbacks`,
      payload: { rating: "like", user: "matrix" },
    },
    // Promptmint apps have no suggested questions: Dify's 403 for the feature turned off.
    "GET /api/app/{slug}/messages/{message_id}/suggested": {
      class: "gateway",
      url: `${chatApp}/messages/${world.chatMessageId}/suggested?user=matrix`,
      ok: 403,
    },
    "GET /api/app/{slug}/app/feedbacks": { class: "gateway", url: `${chatApp}/app/feedbacks` },
    "POST /api/app/{slug}/files/upload": { class: "gateway", url: `${app}/files/upload`, ...upload, ok: 201 },
    "POST /api/app/{slug}/workflows/run": {
      class: "gateway",
      url: `${runApp}/workflows/run`,
      payload: { inputs: {}, user: "matrix" },
    },
    "GET /api/app/{slug}/workflows/run/{workflow_run_id}": {
      class: "gateway",
      url: `${runApp}/workflows/run/${world.workflowRunId}`,
    },
    "POST /api/app/{slug}/workflows/tasks/{task_id}/stop": {
      class: "gateway",
      url: `${runApp}/workflows/tasks/${world.workflowRunId}/stop`,
      payload: { user: "matrix" },
    },
    "POST /api/app/{slug}/mcp": { class: "gateway", url: `${app}/mcp`, ...mcpRequest },
    "POST /api/mcp": { class: "gateway-any", url: "/api/mcp", ...mcpRequest },
    // The agents' MCP endpoints (decision 074) exist only while agent payments are on; this world
    // has none: 404 for everyone, credentials or not.
    "POST /api/agents/app/{slug}/mcp": {
      class: "public",
      url: `/api/agents/app/${world.promptApp.slug}/mcp`,
      ...mcpRequest,
      ok: 404,
    },
    "POST /api/agents/mcp": { class: "public", url: "/api/agents/mcp", ...mcpRequest, ok: 404 },
    "GET /.well-known/oauth-protected-resource": {
      class: "public",
      url: "/.well-known/oauth-protected-resource",
    },
    "GET /.well-known/oauth-protected-resource/{*}": {
      class: "public",
      url: `/.well-known/oauth-protected-resource${app}/mcp`,
    },
    // Discovery for agents (docs/decisions/073): anyone; x402's manifest only while x402 is on.
    "GET /.well-known/promptmint-agents.json": {
      class: "public",
      url: "/.well-known/promptmint-agents.json",
    },
    "GET /.well-known/x402": { class: "public", url: "/.well-known/x402", ok: 404 },
    "GET /.well-known/promptmint-receipt-keys.json": {
      class: "public",
      url: "/.well-known/promptmint-receipt-keys.json",
    },
    "GET /api/v1/models": { class: "gateway-any", url: "/api/v1/models" },
    // An agent's balance (decision 070): only the balance key of an account-less payer reads or
    // refunds it; every account's credentials are refused with 403, a stranger's 401.
    "GET /api/agents/balance": { class: "gateway-any", url: "/api/agents/balance", ok: 403 },
    "POST /api/agents/refund": { class: "gateway-any", url: "/api/agents/refund", ok: 403 },
    "GET /api/v1/models/{model}": { class: "gateway", url: `/api/v1/models/${world.promptApp.slug}` },
    "POST /api/v1/responses": {
      class: "gateway",
      url: "/api/v1/responses",
      payload: { model: world.promptApp.slug, input: "hi" },
    },
    "GET /api/v1/responses/{response_id}": {
      class: "gateway",
      url: `/api/v1/responses/${world.storedResponseId}`,
    },
    "GET /api/v1/responses/{response_id}/input_items": {
      class: "gateway",
      url: `/api/v1/responses/${world.storedResponseId}/input_items`,
    },
    // The owner's key deletes it first; the owner's session then finds it gone.
    "DELETE /api/v1/responses/{response_id}": {
      class: "gateway",
      url: `/api/v1/responses/${world.spareResponseId}`,
      expect: { owner: 404 },
      last: true,
    },
    "POST /api/v1/chat/completions": {
      class: "gateway",
      url: "/api/v1/chat/completions",
      payload: { model: world.promptApp.slug, messages: [{ role: "user", content: "hi" }] },
    },
  };
  // The operator's view (docs/decisions/028). Suspending the owner's app runs last and is lifted
  // right after; the sandbox's refund and dispute buttons refuse an unknown payment (400/404)
  // once the caller is known to be an operator.
  const nobody = "00000000-0000-4000-8000-000000000000";
  Object.assign(table, {
    "GET /api/admin/access": { class: "admin", url: "/api/admin/access" },
    // The event log's pull export and the sinks' progress (docs/decisions/068).
    "GET /api/admin/usage-events": { class: "admin", url: "/api/admin/usage-events?limit=5" },
    "GET /api/admin/usage-export/sinks": { class: "admin", url: "/api/admin/usage-export/sinks" },
    "GET /api/admin/usage-export/reconcile": {
      class: "admin",
      url: "/api/admin/usage-export/reconcile?days=2",
    },
    "GET /api/admin/overview": { class: "admin", url: "/api/admin/overview" },
    "GET /api/admin/exposure": { class: "admin", url: "/api/admin/exposure" },
    "GET /api/admin/audit": { class: "admin", url: "/api/admin/audit" },
    "POST /api/admin/apps/{id}/suspend": {
      class: "admin",
      url: `/api/admin/apps/${world.promptApp.id}/suspend`,
      payload: { reason: "security matrix" },
      last: true,
    },
    "POST /api/admin/apps/{id}/unsuspend": {
      class: "admin",
      url: `/api/admin/apps/${world.promptApp.id}/unsuspend`,
      payload: { reason: "security matrix" },
      last: true,
    },
    "POST /api/admin/users/{id}/suspend": {
      class: "admin",
      url: `/api/admin/users/${nobody}/suspend`,
      payload: { reason: "security matrix" },
      ok: 404,
    },
    "POST /api/admin/users/{id}/unsuspend": {
      class: "admin",
      url: `/api/admin/users/${nobody}/unsuspend`,
      payload: { reason: "security matrix" },
      ok: 404,
    },
    "POST /api/admin/sandbox/refunds": {
      class: "admin",
      url: "/api/admin/sandbox/refunds",
      payload: { payment_intent_id: "pi_sbx_unknown" },
      ok: 400,
    },
    "POST /api/admin/sandbox/disputes": {
      class: "admin",
      url: "/api/admin/sandbox/disputes",
      payload: { payment_intent_id: "pi_sbx_unknown" },
      ok: 400,
    },
    "POST /api/admin/sandbox/disputes/{id}/close": {
      class: "admin",
      url: "/api/admin/sandbox/disputes/dp_sbx_unknown/close",
      payload: { status: "won" },
      ok: 404,
    },
  } satisfies Record<string, RouteRequest>);
  for (const [path, methods, url] of issuerRoutes) {
    for (const method of methods) table[`${method} ${path}`] = { class: "issuer", url };
  }
  return table;
}
