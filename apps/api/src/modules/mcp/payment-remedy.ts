import { randomUUID } from "node:crypto";
import { UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { AppError } from "../../lib/errors.ts";
import type { PaymentRemedy } from "../../lib/payment-remedy.ts";
import { type ToolPrice, toolPrice } from "./app-tool.ts";

/** Where a refused payment says what would fix it, for programs (a tool result's `_meta`). */
export const REMEDY_META_KEY = "promptmint/remedy";

/**
 * A refused payment's remedy as a tool error carries it: the very object the same refusal carries
 * in a Dify or OpenAI 402 (built by billing, given its links and offers by the gateway:
 * lib/payment-remedy.ts), plus the one thing a tool adds, its price (as in `_meta["promptmint/price"]`).
 */
export type ToolRemedy = PaymentRemedy & { price: ToolPrice };

/** The remedy of a refused payment (a 402 that carries one); none for any other error. */
export function toolRemedy(application: ApplicationRow, error: AppError): ToolRemedy | undefined {
  if (error.status !== 402 || !error.remedy) return undefined;
  return { ...error.remedy, price: toolPrice(application) };
}

/**
 * The page a person opens to fix it, from the remedy's links: the API keys page for a key's spend
 * limit, otherwise the wallet. None when no page fixes it (an x402 payment that failed: the agent
 * signs a new one).
 */
export function remedyPage(remedy: PaymentRemedy): string | undefined {
  return remedy.missing === "spend_limit_reached" ? remedy.keys_url : remedy.top_up_url;
}

/**
 * The refusal for a client that declared URL-mode elicitation (MCP 2025-11-25): JSON-RPC error
 * -32042 naming the page to open, after which the client may retry the call; none when no page
 * fixes it. Its message is billing's (what is missing, the figures). A stateless server cannot
 * send `elicitation/create` and wait for the answer (the answer would come in another POST, maybe
 * to another process), which is what this error is for (docs/decisions/051).
 */
export function paymentElicitation(
  remedy: PaymentRemedy,
  error: AppError,
): UrlElicitationRequiredError | undefined {
  const url = remedyPage(remedy);
  if (!url) return undefined;
  return new UrlElicitationRequiredError(
    [{ mode: "url", elicitationId: randomUUID(), url, message: error.message }],
    error.message,
  );
}
