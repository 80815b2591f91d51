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
import {
  paymentElicitation,
  REMEDY_META_KEY,
  remedyPage,
  type ToolRemedy,
  toolRemedy,
} from "./payment-remedy.ts";

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
    // The remedy every protocol's 402 carries (error.remedy, given its links in paid-call.ts).
    const remedy = toolRemedy(application, error);
    const elicitation = remedy && options.session.urlElicitation && paymentElicitation(remedy, error);
    if (elicitation) throw elicitation;
    return {
      isError: true,
      content: [{ type: "text", text: toolErrorText(application, error, remedy) }],
      ...(remedy ? { _meta: { [REMEDY_META_KEY]: remedy } } : {}),
    };
  }
}

/**
 * A refusal the model can act on: a refused payment names the price, the page that fixes it, the
 * app's plans (when money is what is missing) and the x402 alternative when there is one.
 */
function toolErrorText(application: ApplicationRow, error: AppError, remedy: ToolRemedy | undefined): string {
  const text = `${error.status} ${error.code}: ${error.message}`;
  if (!remedy) return `${text} Nothing was charged.`;
  const page = remedyPage(remedy);
  return [
    text,
    `This app costs ${describePrice(application)}.`,
    page && !error.message.includes(page) ? `Fix it at ${page}.` : "",
    remedy.plans_url && remedy.missing !== "spend_limit_reached"
      ? `Or subscribe to a plan at ${remedy.plans_url}.`
      : "",
    remedy.x402 ? "Or pay this one call with x402 (send the request without credentials)." : "",
    "Nothing was charged.",
  ]
    .filter(Boolean)
    .join(" ");
}
