import type { Capability } from "./membership.ts";

/**
 * What a member acting for an organization needs to use each route (decision 084), from the
 * route's method and its registered path (`request.routeOptions.url`), so no route can be added
 * without a rule: a write no rule names needs `manage` (owners and admins), and the access test
 * (access.test.ts) lists every documented route's answer so a change shows in review.
 *
 * `personal`: the route is always the signed-in person's own (their profile, their memberships,
 * invitations, the operator's pages); acting for an organization does not apply to it.
 */
export type RouteAccess = Capability | "personal";

/** Paths always the person's own, whatever account they act for. */
const PERSONAL = [/^\/api(\/v1)?\/(auth|organizations|invitations|admin|config)(\/|$)/];

/** The account's money: reading it needs read_billing, changing it billing. */
const MONEY = [
  /^\/api(\/v1)?\/(wallet|receipts|payouts|subscriptions|billing)(\/|$)/,
  /^\/api(\/v1)?\/usage\/export\.csv$/,
  /^\/api(\/v1)?\/app\/\{app\}\/(payment-methods|subscriptions|create-payment-intent)(\/|$)/,
  /^\/api(\/v1)?\/promotion-codes\/redeem\/?$/,
  /^\/api(\/v1)?\/agents\/refund(\/|$)/,
];

/** Calling apps for the account, and its API keys (writes need call). */
const CALLS = [
  /^\/api(\/v1)?\/keys(\/|$)/,
  /^\/api\/v1\/(chat|responses|completions|models)(\/|$)/,
  /^\/api(\/v1)?\/mcp(\/|$)/,
  /^\/api(\/v1)?\/agents\/(mcp|app\/\{slug\}\/mcp)(\/|$)/,
  /^\/api(\/v1)?\/explore\/apps\/\{slug\}\/try(\/|$)/,
  /^\/api(\/v1)?\/app\/\{slug\}\/(chat-messages|completion-messages|workflows\/run|workflows\/tasks|files\/upload|conversations|messages|mcp)(\/|$)/,
  // Starting a free trial as a consumer, reviewing an app the account paid for.
  /^\/api(\/v1)?\/app\/\{app\}\/trial\/?$/,
  /^\/api(\/v1)?\/explore\/apps\/\{slug\}\/reviews(\/|$)/,
];

/** What the account sells and builds (writes need build). */
const BUILDS = [
  /^\/api(\/v1)?\/(app|apps|prompts|workflows|workflow-providers|prompt-apps|model-keys|webhooks|promotion-codes|creators|embed|releases|evals|experiments|rollouts)(\/|$)/,
];

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Writes by method that change nothing (an estimate computed from the request). */
const READ_ONLY_POSTS = [/^\/api(\/v1)?\/model-prices\/estimate\/?$/];

export function routeAccess(method: string, route: string): RouteAccess {
  // Fastify names a path's parameters `:app` (routeOptions.url), the OpenAPI document `{app}`:
  // the rules are written in the document's form.
  const url = route.replace(/:(\w+)/g, "{$1}");
  if (PERSONAL.some((pattern) => pattern.test(url))) return "personal";
  const money = MONEY.some((pattern) => pattern.test(url));
  // A trial's offer is set by the app's owner (PUT) and started by a consumer (POST).
  if (/\/app\/\{app\}\/trial\/?$/.test(url) && method === "PUT") return "build";
  if (READS.has(method.toUpperCase()) || READ_ONLY_POSTS.some((pattern) => pattern.test(url)))
    return money ? "read_billing" : "read";
  if (money) return "billing";
  if (CALLS.some((pattern) => pattern.test(url))) return "call";
  if (BUILDS.some((pattern) => pattern.test(url))) return "build";
  return "manage";
}

/** How a refusal names what a capability is for. */
export const CAPABILITY_TEXT: Record<Capability, string> = {
  read: "see this",
  read_billing: "see the organization's money (wallet, receipts, payment methods, payouts)",
  build: "change the organization's apps, prompts, workflows, plans or webhooks",
  call: "call apps or manage API keys for the organization",
  billing: "spend or move the organization's money (top-ups, payment methods, plans, payouts)",
  manage: "manage the organization's members and settings",
};
