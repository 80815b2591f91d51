import { randomUUID } from "node:crypto";
import { UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { AppError } from "../../lib/errors.ts";
import { type ToolPrice, toolPrice } from "./app-tool.ts";

/** Where a refused payment says what would fix it, for programs (a tool result's `_meta`). */
export const REMEDY_META_KEY = "promptmint/remedy";

/**
 * What a caller can do about a call that could not be paid (a 402 from billing/call-payment):
 * which limit stopped it, the page that fixes it (absolute), the app's page (its plans), the
 * price, and that nothing was charged.
 */
export interface PaymentRemedy {
  code: "payment_required" | "account_in_debt" | "key_limit_reached";
  /** What is missing: money in the wallet, a settled debt, room under the API key's spend limit. */
  missing: "funds" | "debt_settlement" | "key_spend_limit";
  action: "top_up" | "settle_debt" | "raise_key_limit";
  /** The page where the person fixes it. */
  url: string;
  top_up_url: string;
  /** The app's page, where its plans (which include calls) are offered. */
  app_url: string;
  price: ToolPrice;
  message: string;
  charged_cents: 0;
}

const REMEDIES = {
  payment_required: { missing: "funds", action: "top_up", page: "/wallet" },
  account_in_debt: { missing: "debt_settlement", action: "settle_debt", page: "/wallet" },
  key_limit_reached: { missing: "key_spend_limit", action: "raise_key_limit", page: "/api-keys" },
} as const;

/** The remedy of a refused payment; none for any other error. */
export function paymentRemedy(
  publicUrl: string,
  application: ApplicationRow,
  error: AppError,
): PaymentRemedy | undefined {
  if (error.status !== 402 || !(error.code in REMEDIES)) return undefined;
  const code = error.code as keyof typeof REMEDIES;
  const remedy = REMEDIES[code];
  return {
    code,
    missing: remedy.missing,
    action: remedy.action,
    url: `${publicUrl}${remedy.page}`,
    top_up_url: `${publicUrl}/wallet`,
    app_url: `${publicUrl}/explore/${application.slug}`,
    price: toolPrice(application),
    message: error.message,
    charged_cents: 0,
  };
}

/**
 * The refusal for a client that declared URL-mode elicitation (MCP 2025-11-25): JSON-RPC error
 * -32042 naming the page to open, after which the client may retry the call. A stateless server
 * cannot send `elicitation/create` and wait for the answer (the answer would come in another
 * POST, maybe to another process), which is what this error is for (docs/decisions/051).
 */
export function topUpElicitation(remedy: PaymentRemedy): UrlElicitationRequiredError {
  const what =
    remedy.action === "raise_key_limit"
      ? "Raise this API key's spend limit"
      : remedy.action === "settle_debt"
        ? "Settle your Promptmint balance"
        : "Top up your Promptmint wallet";
  const message = `${what} to make this call ($${remedy.price.amount} per call). Nothing was charged.`;
  return new UrlElicitationRequiredError(
    [{ mode: "url", elicitationId: randomUUID(), url: remedy.url, message }],
    message,
  );
}
