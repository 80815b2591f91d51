import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { RECEIPT_META_KEY } from "../billing/call-receipts-signing.ts";
import { runBlockingCall } from "../gateway/call-lifecycle.ts";
import { centsAsDollars } from "../gateway/charge.ts";
import {
  type GatewayDeps,
  headerPinSource,
  naturalModeOf,
  prepareExecution,
  stickyKeyOf,
} from "../gateway/gateway-call.ts";
import { pinFrom, type VersionPin } from "../releases/pins.ts";
import { type AppSchemas, describePrice, gatewayInputOf, loadAppSchemas } from "./app-tool.ts";
import type { ClientSession } from "./client-session.ts";
import {
  paymentElicitation,
  REMEDY_META_KEY,
  remedyPage,
  type ToolRemedy,
  toolRemedy,
} from "./payment-remedy.ts";
import { agentAppMcpUrl } from "./resources.ts";

/** What a tool result says it cost (decision 029), in `_meta` under our own prefix. */
export const CHARGE_META_KEY = "promptmint/charge";
/**
 * A failed tool call's error for programs, as the HTTP protocols give it in their status and
 * headers: `{status, code, retry_after_seconds?}` (a model provider's 429 says how long to wait,
 * as Retry-After does for Dify and OpenAI callers).
 */
export const ERROR_META_KEY = "promptmint/error";

/**
 * Where a tool call pins a prompt version or label (docs/decisions/057): `params._meta` under our
 * own prefix, as MCP asks of extensions; a tool result names the version that answered there too.
 */
export const VERSION_META_KEY = "promptmint/version";
const VERSION_META_FIELD = `_meta["${VERSION_META_KEY}"]`;

/**
 * The version or label a tool call pins: the catalogue's `call_app` argument `version`,
 * `_meta["promptmint/version"]`, or the HTTP request's `Promptmint-Version` header. Any two naming
 * different ones is a 400 naming the first's field.
 */
export function mcpPin(
  request: FastifyRequest,
  meta: Record<string, unknown> | undefined,
  argument?: { value: string | undefined; field: string },
): { pin: VersionPin; field: string } | undefined {
  const value = meta?.[VERSION_META_KEY];
  if (value !== undefined && value !== null && typeof value !== "string")
    throw invalidFields({ [VERSION_META_FIELD]: "must be a string: a version (v12) or a label (staging)" });
  return pinFrom([
    argument && { value: argument.value, field: argument.field },
    { value, field: VERSION_META_FIELD },
    headerPinSource(request),
  ]);
}

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
    /** The tool call's `params._meta`: a pin (`promptmint/version`) may be there. */
    meta?: Record<string, unknown>;
    /** `call_app`'s `version` argument: a pin too. */
    version?: string;
    session: ClientSession;
  },
): Promise<CallToolResult> {
  const { request, caller, application } = options;
  try {
    const pin = mcpPin(
      request,
      options.meta,
      options.version === undefined ? undefined : { value: options.version, field: "version" },
    );
    // A pinned version's own schemas: its inputs and output may not be production's.
    const schemas =
      pin && application.type === "prompt"
        ? await loadAppSchemas(deps.db, application, pin.pin)
        : options.schemas;
    const input = gatewayInputOf(schemas, options.args);
    const mode = naturalModeOf(application);
    const execution = await prepareExecution(deps, {
      app: application,
      caller,
      input,
      mode,
      pin,
      stickyKey: stickyKeyOf(request, caller.id, undefined),
    });
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
      // The version that answered says whether its answer is structured: the schemas read before
      // the call are production's or the pin's, and an experiment's arm or a label moved since
      // may answer with another output schema (or none).
      ...(execution.outputSchema ? { structuredContent: JSON.parse(result.answer) } : {}),
      _meta: {
        ...(execution.served ? { [VERSION_META_KEY]: `v${execution.served.version}` } : {}),
        [CHARGE_META_KEY]: {
          charged_cents: charge.chargedCents,
          paid_by: charge.paidBy,
          message_id: paid.messageId,
          summary: charged,
        },
        // The call's signed receipt when it was paid (docs/decisions/073).
        ...(charge.receipt ? { [RECEIPT_META_KEY]: charge.receipt } : {}),
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
      content: [
        {
          type: "text",
          text: toolErrorText(application, error, remedy, agentAppMcpUrl(deps.publicUrl, application.slug)),
        },
      ],
      _meta: { [ERROR_META_KEY]: errorMeta(error), ...(remedy ? { [REMEDY_META_KEY]: remedy } : {}) },
    };
  }
}

function errorMeta(error: AppError): { status: number; code: string; retry_after_seconds?: number } {
  const retryAfter = Number(error.headers?.["retry-after"]);
  return {
    status: error.status,
    code: error.code,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retry_after_seconds: retryAfter } : {}),
  };
}

/**
 * A refusal the model can act on: a refused payment names the price, the page that fixes it, the
 * app's plans (when money is what is missing) and the x402 alternative when there is one.
 */
function toolErrorText(
  application: ApplicationRow,
  error: AppError,
  remedy: ToolRemedy | undefined,
  /** The app's MCP URL for agents that pay per call with x402 (decision 074). */
  agentUrl: string,
): string {
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
    remedy.x402 ? `Or pay this one call with x402, without an account, at ${agentUrl}.` : "",
    "Nothing was charged.",
  ]
    .filter(Boolean)
    .join(" ");
}
