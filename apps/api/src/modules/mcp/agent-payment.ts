import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { eq } from "drizzle-orm";
import type { FastifyRequest } from "fastify";
import { Challenge, Credential, Mcp, Receipt } from "mppx";
import { type ApplicationRow, users } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { isUserSuspended } from "../admin/suspensions.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { AgentPaid, AgentPayments, PaidResource, RailName } from "../billing/agent-payments/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import { balanceKeyOf, balanceKeyWanted, prepayOf } from "../gateway/access.ts";
import { bazaarDiscoveryOf } from "../gateway/agent-discovery.ts";
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
 * MPP's MCP binding (mppx `Mcp`, `mppx/mcp-sdk`): the credential in
 * `params._meta["org.paymentauth/credential"]`, the challenges of an unpaid call in a tool result's
 * `_meta["org.paymentauth/payment-required"]` (`{httpStatus, challenges}`), the receipt in
 * `_meta["org.paymentauth/receipt"]`.
 */
export const MPP_CREDENTIAL_META_KEY = Mcp.credentialMetaKey;
export const MPP_PAYMENT_REQUIRED_META_KEY = Mcp.paymentRequiredMetaKey;
export const MPP_RECEIPT_META_KEY = Mcp.receiptMetaKey;
/** Where a paid tool result carries the balance key the request asked for. */
export const BALANCE_KEY_META_KEY = "promptmint/balance-key";

/**
 * Agent payments, when on (docs/decisions/052, 070, 071): `pay` verifies and settles a credential
 * first and credits it to the payer's account-less balance; the call is then an ordinary wallet
 * call of the payer. Undefined when no rail is on.
 */
export function agentPaymentsOf(deps: Pick<GatewayDeps, "agentPayments">): AgentPayments | undefined {
  return deps.agentPayments;
}

/** The credential a tool call carries in its `_meta`, as the HTTP header its rail reads. */
type MetaCredential =
  | { rail: RailName; credential: string; challengeId?: string }
  | { refused: string }
  | undefined;

function credentialOf(meta: Record<string, unknown> | undefined, rails: readonly RailName[]): MetaCredential {
  const x402 = meta?.[X402_PAYMENT_META_KEY] ?? undefined;
  const mpp = meta?.[MPP_CREDENTIAL_META_KEY] ?? undefined;
  if (x402 !== undefined && mpp !== undefined)
    return {
      refused: `send one payment: _meta["${X402_PAYMENT_META_KEY}"] or _meta["${MPP_CREDENTIAL_META_KEY}"], not both`,
    };
  if (x402 !== undefined) {
    if (!rails.includes("x402")) return { refused: "x402 payments are not taken on this server" };
    if (typeof x402 !== "object" || Array.isArray(x402))
      return { refused: `_meta["${X402_PAYMENT_META_KEY}"] must be an x402 PaymentPayload object` };
    return { rail: "x402", credential: encodePaymentSignatureHeader(x402 as PaymentPayload) };
  }
  if (mpp !== undefined) {
    if (!rails.includes("mpp")) return { refused: "MPP payments are not taken on this server" };
    try {
      const header = Credential.serialize(mpp as Credential.Credential);
      return { rail: "mpp", credential: header, challengeId: Credential.deserialize(header).challenge.id };
    } catch {
      return { refused: `_meta["${MPP_CREDENTIAL_META_KEY}"] must be an MPP credential object` };
    }
  }
  return undefined;
}

/**
 * The payer of the tool calls of one MCP request at `url` (the endpoint's absolute URL: the
 * resource the payment names).
 */
export function agentPayer(
  deps: Pick<GatewayDeps, "agentPayments" | "db">,
  request: FastifyRequest,
  url: string,
): AgentPayer {
  return {
    async payAndRun(application, meta, run) {
      const payments = agentPaymentsOf(deps);
      if (!payments) return toolError(new AppError("not_found", "Agent payments are off on this server"));
      const priceCents = effectivePriceCents(application);
      if (priceCents <= 0)
        return toolError(
          new AppError(
            "bad_request",
            `This app is free: a payment cannot be $0. Call it with an API key or a sign-in token at its own MCP URL (/api/app/${application.slug}/mcp).`,
          ),
        );
      const resource: PaidResource = {
        // A budget the agent asks to prepay (the HTTP request's Promptmint-Prepay-Cents), as on
        // every paid endpoint (decision 070).
        priceCents: Math.max(priceCents, prepayOf(request)),
        url,
        description: `One call of '${application.name}' on Promptmint`,
        // The MCP tool, for x402's bazaar discovery (decision 073).
        discovery: bazaarDiscoveryOf(request.url, application),
      };
      let wantsKey: boolean;
      try {
        wantsKey = balanceKeyWanted(request);
      } catch (error) {
        if (error instanceof AppError) return toolError(error);
        throw error;
      }
      const sent = credentialOf(meta, payments.rails);
      if (!sent) return paymentRequired(application, await payments.challenge(resource));
      if ("refused" in sent)
        return paymentRequired(application, await payments.challenge(resource), sent.refused);
      let paid: AgentPaid;
      try {
        paid = await payments.pay(
          { rail: sent.rail, credential: sent.credential },
          { ...resource, applicationId: application.id },
        );
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.status === 402) return paymentRequired(application, error);
        return toolError(error);
      }
      const proof = proofOf(paid.headers, sent.challengeId);
      const withProof = (result: CallToolResult): CallToolResult => ({
        ...result,
        _meta: { ...result._meta, ...proof },
      });
      const [payer] = await deps.db.select().from(users).where(eq(users.id, paid.payerUserId));
      if (!payer) throw new Error("an agent payer's user is missing");
      if (!payer.isActive || (await isUserSuspended(deps.db, payer.id)))
        return withProof(
          toolError(new AppError("account_suspended", "This payer is suspended by the platform's operator")),
        );
      // The balance key (`Promptmint-Balance-Key: issue` on the POST, decision 070): an API key of
      // the payer's account-less user, in the result's _meta since an MCP client reads no headers.
      // With it the agent calls the apps' own MCP URLs, paid from its balance.
      if (wantsKey) {
        const issued = await balanceKeyOf(deps.db, payer);
        if (issued.key !== undefined) proof[BALANCE_KEY_META_KEY] = issued.key;
        else proof[`${BALANCE_KEY_META_KEY}-refused`] = issued.refused;
      }
      // The call is now an ordinary wallet call of the payer (its balance holds the payment).
      request.user = payer;
      return withProof(await run(payer));
    },
  };
}

/**
 * What a settled payment's headers prove, as its binding's `_meta`: x402's `PAYMENT-RESPONSE`
 * (base64 JSON `SettleResponse`) as `x402/payment-response`, MPP's `Payment-Receipt` as
 * `org.paymentauth/receipt` (with the challenge it answers, as mppx's MCP server does).
 */
function proofOf(headers: Record<string, string>, challengeId: string | undefined): Record<string, unknown> {
  const header = (name: string) =>
    Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1] || undefined;
  const proof: Record<string, unknown> = {};
  const settlement = header("payment-response");
  if (settlement)
    try {
      proof[X402_PAYMENT_RESPONSE_META_KEY] = decodePaymentResponseHeader(settlement);
    } catch {}
  const receipt = header("payment-receipt");
  if (receipt)
    try {
      proof[MPP_RECEIPT_META_KEY] = {
        ...Receipt.deserialize(receipt),
        ...(challengeId ? { challengeId } : {}),
      };
    } catch {}
  return proof;
}

/**
 * The bindings' payment-required tool result, `isError: true`: x402's `PaymentRequired` as its
 * `structuredContent` (its `error` the reason of a refusal) and as JSON in `content[0].text`; MPP's
 * challenges in `_meta["org.paymentauth/payment-required"]`; and ours in `_meta`, the error and
 * the remedy (what every protocol's 402 carries, decision 052). One result serves both clients.
 */
export function paymentRequired(
  application: ApplicationRow,
  error: AppError,
  reason?: string,
): CallToolResult {
  let required: PaymentRequired | undefined;
  try {
    const header = error.headers?.["payment-required"];
    if (header) required = decodePaymentRequiredHeader(header);
  } catch {
    required = undefined;
  }
  let challenges: unknown[] = [];
  try {
    const header = error.headers?.["www-authenticate"];
    if (header) challenges = Challenge.deserializeList(header);
  } catch {
    challenges = [];
  }
  if (!required && challenges.length === 0) return toolError(error);
  const body = required && reason ? { ...required, error: reason } : required;
  const text = reason ? `${error.message} (${reason})` : error.message;
  const remedy = toolRemedy(application, error);
  return {
    isError: true,
    ...(body
      ? {
          structuredContent: body as unknown as Record<string, unknown>,
          content: [{ type: "text", text: JSON.stringify(body) }],
        }
      : { content: [{ type: "text", text: `${error.status} ${error.code}: ${text}` }] }),
    _meta: {
      [ERROR_META_KEY]: { status: error.status, code: error.code },
      ...(remedy ? { [REMEDY_META_KEY]: remedy } : {}),
      ...(challenges.length > 0
        ? {
            [MPP_PAYMENT_REQUIRED_META_KEY]: {
              httpStatus: 402,
              challenges,
              problem: { status: 402, title: error.code, detail: reason ?? error.message },
            },
          }
        : {}),
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
