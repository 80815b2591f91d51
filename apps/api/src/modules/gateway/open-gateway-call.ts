import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { Execution, GatewayInput } from "./execution.ts";
import { openPaidCall, type PaidCall } from "./paid-call.ts";

/** What opening a paid call needs from the server: the database, the platform's fee, where to top up. */
export interface OpenGatewayCallDeps {
  db: Database;
  feePercent: number;
  publicUrl: string;
}

/**
 * Takes payment for a prepared call the way every endpoint does (paid-call.ts openPaidCall): one
 * place for the arguments they all pass, so a change to them lands once (issue 19). The fee is
 * `deps.feePercent` (the platform's; embedded calls pass 100); a 402 sends the caller to their
 * wallet's page to top up.
 */
export function openGatewayPaidCall(
  deps: OpenGatewayCallDeps,
  options: {
    request: FastifyRequest;
    caller: LocalUser;
    application: ApplicationRow;
    execution: Execution;
    mode: "completion" | "chat";
    input: Pick<GatewayInput, "user" | "query">;
    /** The caller's cap on the price (max-price.ts): above it the call is refused before payment. */
    maxPriceCents?: number;
    /** The owner pays for a call made on a visitor's behalf (docs/decisions/009-embed.md). */
    ownerPays?: boolean;
  },
): Promise<PaidCall> {
  return openPaidCall(deps.db, {
    ...options,
    feePercent: deps.feePercent,
    topUpUrl: `${deps.publicUrl}/wallet`,
  });
}
