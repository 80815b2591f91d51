import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { runBlockingCall } from "../gateway/call-lifecycle.ts";
import { centsAsDollars } from "../gateway/charge.ts";
import { type GatewayDeps, naturalModeOf, prepareExecution } from "../gateway/gateway-call.ts";
import { type AppSchemas, describePrice, gatewayInputOf } from "./app-tool.ts";
import type { ClientSession } from "./client-session.ts";
import { type PaymentRemedy, paymentRemedy, REMEDY_META_KEY, topUpElicitation } from "./payment-remedy.ts";

/** What a tool result says it cost (decision 029), in `_meta` under our own prefix. */
export const CHARGE_META_KEY = "promptmint/charge";

/**
 * Runs one app as a tool: a blocking paid call through the gateway's path (call-lifecycle.ts).
 * What the caller can fix — bad inputs, not enough money (402 with the price and where to top
 * up), a failed upstream (not charged) — comes back as a tool error the model can read. A refused
 * payment also carries its remedy in `_meta` (payment-remedy.ts); to a client that declared
 * URL-mode elicitation it is instead the -32042 error that asks the client to open the page.
 */
export async function callAppAsTool(
  deps: GatewayDeps,
  options: {
    request: FastifyRequest;
    caller: LocalUser;
    application: ApplicationRow;
    schemas: AppSchemas;
    args: Record<string, unknown> | undefined;
    session: ClientSession;
  },
): Promise<CallToolResult> {
  const { request, caller, application, schemas } = options;
  try {
    const input = gatewayInputOf(schemas, options.args);
    const mode = naturalModeOf(application);
    const execution = await prepareExecution(deps, { app: application, caller, input, mode });
    const { result, charge, paid } = await runBlockingCall(deps, {
      request,
      caller,
      application,
      execution,
      mode,
      input,
    });
    const charged = `Charged: $${centsAsDollars(charge.chargedCents)} (paid by ${charge.paidBy}).`;
    return {
      content: [{ type: "text", text: result.answer }],
      ...(schemas.outputSchema ? { structuredContent: JSON.parse(result.answer) } : {}),
      _meta: {
        [CHARGE_META_KEY]: {
          charged_cents: charge.chargedCents,
          paid_by: charge.paidBy,
          message_id: paid.messageId,
          summary: charged,
        },
      },
    };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const remedy = paymentRemedy(deps.publicUrl, application, error);
    if (remedy && options.session.urlElicitation) throw topUpElicitation(remedy);
    return {
      isError: true,
      content: [{ type: "text", text: toolErrorText(application, error, remedy) }],
      ...(remedy ? { _meta: { [REMEDY_META_KEY]: remedy } } : {}),
    };
  }
}

/** A refusal the model can act on: a refused payment names the price and the page that fixes it. */
function toolErrorText(
  application: ApplicationRow,
  error: AppError,
  remedy: PaymentRemedy | undefined,
): string {
  const text = `${error.status} ${error.code}: ${error.message}`;
  if (!remedy) return `${text} Nothing was charged.`;
  return [
    text,
    `This app costs ${describePrice(application)}.`,
    error.message.includes(remedy.url) ? "" : `Fix it at ${remedy.url}.`,
    remedy.action === "top_up" ? `Or subscribe to a plan at ${remedy.app_url}.` : "",
    "Nothing was charged.",
  ]
    .filter(Boolean)
    .join(" ");
}
