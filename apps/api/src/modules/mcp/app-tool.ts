import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { EMPTY_IO_SCHEMA, type IoSchema, IoSchemaSchema } from "@promptmint/contracts";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";
import { effectivePriceCents, upcomingPrice } from "../billing/price-changes.ts";
import { type InputLimitSettings, publishedInputLimit } from "../gateway/call-worst-case.ts";
import { centsAsDollars } from "../gateway/charge.ts";
import type { GatewayInput } from "../gateway/execution.ts";
import { naturalModeOf } from "../gateway/gateway-call.ts";
import { loadPrompt, type VersionPin } from "../prompts/load-prompt.ts";

/** An app's schemas as an MCP tool sees them. */
export interface AppSchemas {
  inputSchema: IoSchema;
  outputSchema: IoSchema | null;
  /** Whether the call takes a `query` besides its inputs (chat apps and workflows). */
  takesQuery: boolean;
  /** What bounds a call's input (decision 063): the version's model settings; null for a workflow. */
  limitSettings: InputLimitSettings | null;
}

const QUERY_PROPERTY = {
  type: "string" as const,
  description: "The message to send (chat apps and workflows)",
};

/**
 * The schemas of the prompt's `production` version (or of the version or label pinned: 404 naming
 * it when there is none); a workflow declares none, so its inputs pass through as they are.
 */
export async function loadAppSchemas(
  db: Database,
  app: ApplicationRow,
  pin?: VersionPin,
): Promise<AppSchemas> {
  if (app.type !== "prompt")
    return { inputSchema: EMPTY_IO_SCHEMA, outputSchema: null, takesQuery: true, limitSettings: null };
  const { prompt, active } = await loadPrompt(db, app, pin);
  return {
    limitSettings: prompt,
    inputSchema: IoSchemaSchema.parse(active.inputSchema),
    outputSchema: active.outputSchema ? IoSchemaSchema.parse(active.outputSchema) : null,
    takesQuery: naturalModeOf(app) === "chat",
  };
}

/** The price as people read it, with an announced increase (decision 021): "$0.30 per call (…)". */
export function describePrice(app: ApplicationRow): string {
  const price = `$${centsAsDollars(effectivePriceCents(app))} per call`;
  const upcoming = upcomingPrice(app);
  return upcoming
    ? `${price} (from ${upcoming.at.toISOString()}: $${centsAsDollars(upcoming.cents)} per call)`
    : price;
}

/**
 * The tool's argument schema: the app's input schema, plus a required `query` string for apps
 * that take one. A workflow declares no inputs: any other argument is passed to it as an input.
 */
export function toolInputSchema(app: ApplicationRow, schemas: AppSchemas): Tool["inputSchema"] {
  const { inputSchema, takesQuery } = schemas;
  if (!takesQuery || "query" in inputSchema.properties) return inputSchema as Tool["inputSchema"];
  return {
    ...inputSchema,
    properties: { ...inputSchema.properties, query: QUERY_PROPERTY },
    required: [...(inputSchema.required ?? []), "query"],
    ...(app.type === "workflow" ? { additionalProperties: true } : {}),
  } as Tool["inputSchema"];
}

/** Where a tool states its price for programs (`_meta`, under our own prefix as MCP asks). */
export const PRICE_META_KEY = "promptmint/price";

/** A tool's price as a program reads it: what one call costs now, and any announced change. */
export interface ToolPrice {
  /** Dollars with cents, as a string so that no client rounds it: "0.30". */
  amount: string;
  amount_cents: number;
  currency: "USD";
  per: "call";
  /** Who pays: the caller's plan when it includes the call, else their wallet (owners call free). */
  paid_from: ["plan", "wallet"];
  /** An announced increase (decision 021): from `at`, a call costs `amount_cents`. */
  upcoming: { amount: string; amount_cents: number; at: string } | null;
}

export function toolPrice(app: ApplicationRow): ToolPrice {
  const cents = effectivePriceCents(app);
  const upcoming = upcomingPrice(app);
  return {
    amount: centsAsDollars(cents),
    amount_cents: cents,
    currency: "USD",
    per: "call",
    paid_from: ["plan", "wallet"],
    upcoming: upcoming
      ? {
          amount: centsAsDollars(upcoming.cents),
          amount_cents: upcoming.cents,
          at: upcoming.at.toISOString(),
        }
      : null,
  };
}

/**
 * The MCP tool of one app: named by its slug, its price in the description (for the model and
 * the person reading the tool list) and in `_meta` (for programs); its output schema when the app
 * declares one, so its results carry `structuredContent` valid against it (call-app.ts).
 */
export function appTool(
  app: ApplicationRow,
  schemas: AppSchemas,
  feePercent: number,
  /** `x402`: listed on the agents' endpoint, where each call is paid with x402 (decision 074). */
  paidBy: "account" | "x402" = "account",
): Tool {
  const limit = publishedInputLimit(schemas.limitSettings, effectivePriceCents(app), feePercent);
  const description = [
    app.description.trim() || app.name,
    paidBy === "x402"
      ? `Costs ${describePrice(app)}, paid per call without an account (x402 or MPP, in the call's _meta): a call without payment answers the payment requirements.`
      : `Costs ${describePrice(app)}, paid from your plan or wallet; a failed call costs nothing.`,
    ...(limit === null ? [] : [describeInputLimit(limit)]),
  ].join("\n\n");
  return {
    name: app.slug,
    title: app.name,
    description,
    inputSchema: toolInputSchema(app, schemas),
    // Not on the agents' endpoint: x402's payment-required result puts its PaymentRequired in
    // `structuredContent`, which an SDK client checks against a declared output schema even when
    // `isError` is set (the answer still carries `structuredContent`).
    ...(schemas.outputSchema && paidBy === "account"
      ? { outputSchema: schemas.outputSchema as Tool["outputSchema"] }
      : {}),
    _meta: { [PRICE_META_KEY]: toolPrice(app), [INPUT_LIMIT_META_KEY]: { max_input_tokens: limit } },
  };
}

/** Where a tool states the most input tokens one call may carry (decision 063); null: no limit. */
export const INPUT_LIMIT_META_KEY = "promptmint/input-limit";

/** The limit as the tool's description says it. */
export function describeInputLimit(limit: number): string {
  return `Up to ${limit.toLocaleString("en-US")} input tokens a call (this app's prompt included; one token per byte of what you send); a larger call is refused (413 input_too_large) and costs nothing.`;
}

/** A tool call's arguments as a gateway call's input: `query` apart (when the tool added it), the rest as inputs. */
export function gatewayInputOf(schemas: AppSchemas, args: Record<string, unknown> | undefined): GatewayInput {
  const { query, ...rest } = args ?? {};
  const queryIsInput = "query" in schemas.inputSchema.properties;
  if (!schemas.takesQuery || queryIsInput)
    return {
      inputs: args ?? {},
      query: queryIsInput && typeof query === "string" ? query : undefined,
      response_mode: "blocking",
    };
  if (query !== undefined && typeof query !== "string") throw invalidFields({ query: "must be a string" });
  return { inputs: rest, query, response_mode: "blocking" };
}
