import { and, desc, eq } from "drizzle-orm";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { agentRefunds } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { currentUser } from "../auth/authenticate.ts";
import { walletBalances } from "../billing/balances.ts";
import type { GatewayDeps } from "./gateway-call.ts";

const tags = ["agents"];

const RefundSchema = z.object({
  refund_id: z.string().nullable(),
  amount_micros: z.number().int(),
  status: z.enum(["refunded", "owed", "nothing"]),
  reference: z.string().optional(),
  reason: z.string().optional(),
});

const BalanceSchema = z.object({
  rail: z.string(),
  payer: z.string(),
  /** Unspent: the wallet and what open leases still hold of it (billing/balances.ts). */
  balance_micros: z.number().int(),
  refunds: z.array(
    z.object({
      id: z.string(),
      amount_micros: z.number().int(),
      status: z.enum(["owed", "refunded"]),
      reference: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
});

/** A payer of an agent rail: its account-less user (issuer = the rail), or 403 naming why not. */
function agentPayerOf(user: { issuer: string; subject: string }) {
  if (user.issuer !== "x402" && user.issuer !== "mpp")
    throw new AppError(
      "forbidden",
      "This is an agent's balance endpoint: call it with the balance key of an agent that paid with x402 or MPP. An account's wallet is on /api/billing/wallet.",
    );
  return { rail: user.issuer, payer: user.subject };
}

/**
 * An agent's balance (issue 40, docs/decisions/070): what it paid with x402 or MPP, less what its
 * calls spent, read and asked back with its balance key (a paid call's `Promptmint-Balance-Key:
 * issue` gives one; access.ts). Served at /api/agents and /api/v1/agents.
 */
export const agentsRoutes: FastifyPluginAsyncZod<
  Pick<GatewayDeps, "db" | "guards" | "agentPayments">
> = async (app, deps) => {
  const { db, guards } = deps;
  app.get(
    "/agents/balance",
    {
      schema: {
        tags,
        summary: "An agent's balance: paid in with x402 or MPP, spent by its calls, and its refunds",
        security: [{ bearerAuth: [] }],
        response: { 200: BalanceSchema },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const user = currentUser(request);
      const payer = agentPayerOf(user);
      const [balances, refunds] = await Promise.all([
        walletBalances(db, user.id),
        db
          .select()
          .from(agentRefunds)
          .where(and(eq(agentRefunds.payerUserId, user.id)))
          .orderBy(desc(agentRefunds.createdAt))
          .limit(50),
      ]);
      return {
        ...payer,
        balance_micros: balances.wallet + balances.held,
        refunds: refunds.map((refund) => ({
          id: refund.id,
          amount_micros: Number(refund.amountMicros),
          status: refund.status,
          reference: refund.reference,
          created_at: refund.createdAt.toISOString(),
        })),
      };
    },
  );

  app.post(
    "/agents/refund",
    {
      schema: {
        tags,
        summary: "Ask an agent's unspent balance back",
        description:
          "Everything the agent's balance holds goes back to its payer at once: through Stripe for MPP (status `refunded`), or recorded as owed to the paying address for x402, whose protocol has no refund (status `owed`, paid by the platform's operator). Calls in flight keep what they hold and give back the rest when they end; ask again then.",
        security: [{ bearerAuth: [] }],
        body: z.strictObject({}).nullish(),
        response: { 200: RefundSchema },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const user = currentUser(request);
      agentPayerOf(user);
      if (!deps.agentPayments)
        throw new AppError(
          "unavailable",
          "This server takes no agent payments now: the refund cannot be paid",
        );
      const result = await deps.agentPayments.refund(user.id, request.log);
      return {
        refund_id: result.refundId,
        amount_micros: result.amountMicros,
        status: result.status,
        ...(result.reference ? { reference: result.reference } : {}),
        ...(result.reason ? { reason: result.reason } : {}),
      };
    },
  );
};
