import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { eq } from "drizzle-orm";
import type { FastifyRequest } from "fastify";
import { type ApplicationRow, users } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { isUserSuspended } from "../admin/suspensions.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { AgentPaid, AgentPayments, PaidResource } from "../billing/agent-payments/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { GatewayDeps } from "../gateway/gateway-call.ts";
import { ERROR_META_KEY } from "./call-app.ts";
import { REMEDY_META_KEY, toolRemedy } from "./payment-remedy.ts";

/**
 * x402's MCP transport binding, tool-result form (x402 `specs/transports-v2/mcp.md`,
 * docs/decisions/074-mcp-oauth-beside-x402.md), on the agents' MCP endpoints
 * (`/api[/v1]/agents/app/{slug}/mcp`, `/api[/v1]/agents/mcp`):
 *
 * - a `tools/call` without `params._meta["x402/payment"]` runs nothing and answers a tool result
 *   with `isError: true` whose `structuredContent` is the x402 `PaymentRequired` and whose
 *   `content[0].text` is the same object as JSON;
 * - with it (a `PaymentPayload` object), the payment is verified and settled first (credited to
 *   the payer's account-less balance), then the tool runs as an ordinary wallet call of that
 *   payer, and the result carries the settlement in `_meta["x402/payment-response"]`;
 * - a refused payment is again the `PaymentRequired` tool result, its `error` saying why.
 */
export const X402_PAYMENT_META_KEY = "x402/payment";
export const X402_PAYMENT_RESPONSE_META_KEY = "x402/payment-response";

/** Pays for one tool call of `application`, then runs it as the payer. */
export interface AgentPayer {
  payAndRun(
    application: ApplicationRow,
    meta: Record<string, unknown> | undefined,
    run: (caller: LocalUser) => Promise<CallToolResult>,
  ): Promise<CallToolResult>;
}

/**
 * Agent payments when they take x402 (docs/decisions/052, 070): `pay` verifies and settles a
 * credential first and credits it to the payer's account-less balance; the call is then an
 * ordinary wallet call of the payer. Undefined when x402 is off (MPP alone does not open the
 * agents' MCP endpoints: its MCP binding is not implemented, decision 074).
 */
export function x402PaymentsOf(deps: Pick<GatewayDeps, "agentPayments">): AgentPayments | undefined {
  return deps.agentPayments?.rails.includes("x402") ? deps.agentPayments : undefined;
}

/**
 * The payer of the tool calls of one MCP request at `url` (the endpoint's absolute URL: the
 * x402 resource the payment names).
 */
export function agentPayer(
  deps: Pick<GatewayDeps, "agentPayments" | "db">,
  request: FastifyRequest,
  url: string,
): AgentPayer {
  return {
    async payAndRun(application, meta, run) {
      const payments = x402PaymentsOf(deps);
      if (!payments) return toolError(new AppError("not_found", "Agent payments are off on this server"));
      const priceCents = effectivePriceCents(application);
      if (priceCents <= 0)
        return toolError(
          new AppError(
            "bad_request",
            `This app is free: x402 cannot pay $0. Call it with an API key or a sign-in token at its own MCP URL (/api/app/${application.slug}/mcp).`,
          ),
        );
      const resource: PaidResource = {
        priceCents,
        url,
        description: `One call of '${application.name}' on Promptmint`,
      };
      const payment = meta?.[X402_PAYMENT_META_KEY];
      if (payment === undefined || payment === null)
        return paymentRequired(application, await payments.challenge(resource));
      if (typeof payment !== "object" || Array.isArray(payment))
        return paymentRequired(
          application,
          await payments.challenge(resource),
          `_meta["${X402_PAYMENT_META_KEY}"] must be an x402 PaymentPayload object`,
        );
      let paid: AgentPaid;
      try {
        paid = await payments.pay(
          { rail: "x402", credential: encodePaymentSignatureHeader(payment as PaymentPayload) },
          { ...resource, applicationId: application.id },
        );
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.status === 402 && error.headers?.["payment-required"])
          return paymentRequired(application, error);
        return toolError(error);
      }
      const settlement = settlementOf(paid.headers);
      const withSettlement = (result: CallToolResult): CallToolResult => ({
        ...result,
        _meta: { ...result._meta, ...(settlement ? { [X402_PAYMENT_RESPONSE_META_KEY]: settlement } : {}) },
      });
      const [payer] = await deps.db.select().from(users).where(eq(users.id, paid.payerUserId));
      if (!payer) throw new Error("an agent payer's user is missing");
      if (!payer.isActive || (await isUserSuspended(deps.db, payer.id)))
        return withSettlement(
          toolError(new AppError("account_suspended", "This payer is suspended by the platform's operator")),
        );
      // The call is now an ordinary wallet call of the payer (its balance holds the payment).
      request.user = payer;
      return withSettlement(await run(payer));
    },
  };
}

/** The settlement a paid call's headers carry (`PAYMENT-RESPONSE`, base64 JSON), as an object. */
function settlementOf(headers: Record<string, string>): Record<string, unknown> | undefined {
  const header = Object.entries(headers).find(([name]) => name.toLowerCase() === "payment-response")?.[1];
  if (!header) return undefined;
  try {
    return decodePaymentResponseHeader(header) as unknown as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The binding's payment-required tool result: `structuredContent` is the `PaymentRequired`
 * (its `error` the reason of a refusal), `content[0].text` the same as JSON; `_meta` adds our
 * error and remedy (what every protocol's 402 carries, decision 052) for programs.
 */
export function paymentRequired(
  application: ApplicationRow,
  error: AppError,
  reason?: string,
): CallToolResult {
  const header = error.headers?.["payment-required"];
  let required: PaymentRequired;
  try {
    required = decodePaymentRequiredHeader(header ?? "");
  } catch {
    return toolError(error);
  }
  const body: PaymentRequired = reason ? { ...required, error: reason } : required;
  const remedy = toolRemedy(application, error);
  return {
    isError: true,
    structuredContent: body as unknown as Record<string, unknown>,
    content: [{ type: "text", text: JSON.stringify(body) }],
    _meta: {
      [ERROR_META_KEY]: { status: error.status, code: error.code },
      ...(remedy ? { [REMEDY_META_KEY]: remedy } : {}),
    },
  };
}

function toolError(error: AppError): CallToolResult {
  const retryAfter = Number(error.headers?.["retry-after"]);
  return {
    isError: true,
    content: [{ type: "text", text: `${error.status} ${error.code}: ${error.message}` }],
    _meta: {
      [ERROR_META_KEY]: {
        status: error.status,
        code: error.code,
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retry_after_seconds: retryAfter } : {}),
      },
    },
  };
}
