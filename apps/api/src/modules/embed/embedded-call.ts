import type { EmbedMessageRequestSchema, EmbedMessageResponse } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import { runBlockingCall } from "../gateway/call-lifecycle.ts";
import type { GatewayInput } from "../gateway/execution.ts";
import { type GatewayDeps, prepareExecution, stickyKeyOf } from "../gateway/gateway-call.ts";
import { maxPriceOf } from "../gateway/max-price.ts";
import { type EmbedClaims, findOwner } from "./embed.service.ts";
import { type EmbedLimits, reserveEmbedSpend } from "./embed-limits.ts";

/**
 * One widget message through the paid call's life (call-lifecycle.ts), made in the owner's name
 * for the visitor and paid from the owner's wallet, within the app's daily cap: its price is
 * counted against the cap before it is paid for and given back when it is not charged
 * (embed-limits.ts).
 */
export async function runEmbeddedCall(
  deps: GatewayDeps,
  options: {
    request: FastifyRequest;
    application: ApplicationRow;
    claims: EmbedClaims;
    body: z.output<typeof EmbedMessageRequestSchema>;
    limits: EmbedLimits;
  },
): Promise<EmbedMessageResponse> {
  const { db } = deps;
  const { request, application, claims, body } = options;
  const owner = await findOwner(db, application);
  const mode = application.interactionMode;
  const input: GatewayInput = {
    inputs: body.inputs,
    query: body.query,
    response_mode: "blocking",
    user: `embed:${claims.visitor}`,
    conversation_id: mode === "chat" ? body.conversation_id : undefined,
  };
  // Always `production` (or its experiment's arm, sticky per visitor): a widget's visitor pins
  // nothing. The version that answered is recorded on the invocation (docs/decisions/057).
  const execution = await prepareExecution(deps, {
    app: application,
    caller: owner,
    input,
    mode,
    stickyKey: stickyKeyOf(request, owner.id, input.user),
  });
  const spend = await reserveEmbedSpend(db, {
    applicationId: application.id,
    priceCents: effectivePriceCents(application),
    capCents: options.limits.dailyCapCents,
  });
  const { result, paid } = await runBlockingCall(
    // The whole price goes to the platform: the owner buys their visitors' calls.
    { ...deps, feePercent: 100 },
    {
      request,
      caller: owner,
      application,
      execution,
      mode,
      input,
      ownerPays: true,
      maxPriceCents: maxPriceOf(request, body.max_price_cents),
      // Refused, or failed after payment: the price goes back to the day's cap.
      notCharged: spend.giveBack,
    },
  ).catch((error) => {
    // The visitor is not the one who can fix an empty wallet, nor should they see its balance.
    if (error instanceof AppError && error.code === "payment_required")
      throw new AppError("payment_required", "This assistant is unavailable right now");
    throw error;
  });
  return {
    message_id: paid.messageId,
    answer: result.answer,
    ...(execution.conversation ? { conversation_id: execution.conversation.id } : {}),
  };
}
