import type { EmbedMessageRequestSchema, EmbedMessageResponse } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { GatewayInput } from "../gateway/execution.ts";
import { prepareExecution } from "../gateway/gateway-call.ts";
import { maxPriceOf } from "../gateway/max-price.ts";
import { generatePaid, openGatewayPaidCall } from "../gateway/open-gateway-call.ts";
import type { LlmClient } from "../models/llm.ts";
import { type EmbedClaims, findOwner } from "./embed.service.ts";
import { type EmbedLimits, reserveEmbedSpend } from "./embed-limits.ts";

/**
 * One widget message through the gateway's path (prepare → hold → call → settle and record, or
 * release), made in the owner's name for the visitor and paid from the owner's wallet, within
 * the app's daily cap: its price is counted against the cap before it is paid for and given back
 * when it is not charged (embed-limits.ts).
 */
export async function runEmbeddedCall(
  db: Database,
  options: {
    request: FastifyRequest;
    application: ApplicationRow;
    claims: EmbedClaims;
    body: z.output<typeof EmbedMessageRequestSchema>;
    llm: LlmClient;
    secrets: SecretBox;
    safeFetch: SafeFetch;
    publicUrl: string;
    payments: CallPayments;
    limits: EmbedLimits;
  },
): Promise<EmbedMessageResponse> {
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
  const execution = await prepareExecution(
    { db, ...options },
    { app: application, caller: owner, input, mode },
  );
  const spend = await reserveEmbedSpend(db, {
    applicationId: application.id,
    priceCents: effectivePriceCents(application),
    capCents: options.limits.dailyCapCents,
  });
  const paid = await openGatewayPaidCall(
    // The whole price goes to the platform: the owner buys their visitors' calls.
    { payments: options.payments, publicUrl: options.publicUrl, feePercent: 100 },
    {
      request,
      caller: owner,
      application,
      execution,
      mode,
      input,
      ownerPays: true,
      maxPriceCents: maxPriceOf(request, body.max_price_cents),
    },
  ).catch(async (error) => {
    await spend.giveBack();
    // The visitor is not the one who can fix an empty wallet, nor should they see its balance.
    if (error instanceof AppError && error.code === "payment_required")
      throw new AppError("payment_required", "This assistant is unavailable right now");
    throw error;
  });

  // Run, record and pay as every blocking call does (generatePaid); an answer that never came is
  // not charged, so its price goes back to the day's cap too.
  const { result } = await generatePaid(paid, {
    ...execution,
    generate: () =>
      execution.generate().catch(async (error) => {
        await spend.giveBack();
        throw error;
      }),
  });
  return {
    message_id: paid.messageId,
    answer: result.answer,
    ...(execution.conversation ? { conversation_id: execution.conversation.id } : {}),
  };
}
