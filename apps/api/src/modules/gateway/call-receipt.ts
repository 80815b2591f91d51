import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { CallReceipt } from "../billing/call-receipts-signing.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { Execution } from "./execution.ts";
import type { GatewayDeps } from "./gateway-call.ts";
import type { CallCharge } from "./paid-call.ts";

/**
 * The signed receipt of one ended call (docs/decisions/073), or undefined: only a call that was
 * paid gets one — charged (`wallet`, `x402`) or covered by the caller's plan (`plan`). The owner's
 * own call, a free app and a failed call (`owner`, `free`, `none`) paid nothing and get none; so
 * does every call when the server has no signer. A signature that fails is logged and the answer
 * goes out without a receipt: the call is paid and answered already, and a receipt is evidence
 * of it, not a condition of it.
 */
export async function signCallReceipt(
  deps: Pick<GatewayDeps, "receipts">,
  request: FastifyRequest,
  call: {
    caller: LocalUser;
    application: ApplicationRow;
    execution: Pick<Execution, "served">;
    messageId: string;
    charge: CallCharge;
    /** The price an agent's payment authorized (its admission's); else the app's price. */
    priceCents?: number;
  },
): Promise<string | undefined> {
  const { charge, caller, application } = call;
  // An agent's call is paid from the balance its rail paid into (decision 070): the receipt names the rail.
  const agentRail = caller.issuer === "x402" || caller.issuer === "mpp" ? caller.issuer : undefined;
  const paidBy = agentRail && charge.chargedCents > 0 ? agentRail : receiptPaidBy(charge);
  if (!deps.receipts || !paidBy) return undefined;
  const receipt: CallReceipt = {
    invocationId: call.messageId,
    app: { id: application.id, slug: application.slug, version: call.execution.served?.version ?? null },
    priceCents:
      call.priceCents ?? (charge.chargedCents > 0 ? charge.chargedCents : effectivePriceCents(application)),
    chargedCents: charge.chargedCents,
    paidBy,
    // An account-less payer is named by its label (its rail and address), a person by their id only.
    payer: {
      userId: caller.id,
      ...(agentRail ? { label: caller.username } : {}),
    },
    at: new Date(),
  };
  try {
    return await deps.receipts.sign(receipt);
  } catch (err) {
    request.log.error({ err, invocation: call.messageId }, "could not sign a call's receipt");
    return undefined;
  }
}

/** How a charge was paid, when it was paid at all (the calls that get a receipt). */
function receiptPaidBy(charge: CallCharge): CallReceipt["paidBy"] | undefined {
  if (charge.paidBy === "plan") return "plan";
  if (charge.chargedCents <= 0) return undefined;
  return charge.paidBy === "wallet" || charge.paidBy === "x402" ? charge.paidBy : undefined;
}
