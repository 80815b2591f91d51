import { randomBytes } from "node:crypto";
import {
  AdminExposureSchema,
  AdminOverviewSchema,
  AdminPeriodQuerySchema,
  AuditEntrySchema,
  ReversalResultSchema,
  SandboxDisputeCloseSchema,
  SandboxDisputeSchema,
  SandboxRefundSchema,
  SuspendSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import { parseDateRange } from "../../lib/date-range.ts";
import { AppError } from "../../lib/errors.ts";
import type { AuthGuards } from "../auth/authenticate.ts";
import { currentUser, operatorGuard } from "../auth/authenticate.ts";
import type { ReversalFact } from "../billing/reversals.ts";
import {
  findSandboxDispute,
  reverseSandboxPayment,
  sandboxPaymentAmount,
  sandboxRefundAmount,
} from "../billing/sandbox-reversals.ts";
import type { StripeGateway } from "../billing/stripe-gateway.ts";
import { adminOverview } from "./admin.service.ts";
import type { Actor } from "./audit.ts";
import { listAudit } from "./audit.ts";
import { adminExposure } from "./exposure.ts";
import { setSuspended } from "./suspensions.ts";

const errors = errorResponses(400, 401, 403, 404, 409, 503);
const security = [{ bearerAuth: [] }];
const tags = ["admin"];
/** The longest period the overview sums (its queries scan the period's rows). */
const MAX_PERIOD_DAYS = 1_100;

/**
 * The operator's view (issue 17 item 5, docs/decisions/028): figures, disputes and debts, top
 * apps and creators, suspensions, the audit log, and the sandbox's refund and dispute buttons.
 * Only users holding the operator role with a verified address (operators.ts, decision 041);
 * everyone else signed in gets 403, naming the unverified address when that is what is missing.
 */
export const adminRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  config: Config;
  stripe: StripeGateway | undefined;
}> = async (app, { db, guards, config, stripe }) => {
  const requireOperator = operatorGuard(db, guards);
  const actorOf = (request: FastifyRequest): Actor => {
    const user = currentUser(request);
    return { id: user.id, email: user.email };
  };
  const requireSandbox = () => {
    if (stripe)
      throw new AppError("bad_request", "This server takes real payments through Stripe: refund there");
    if (config.isProduction) throw new AppError("unavailable", "Sandbox payments are disabled in production");
  };

  app.get(
    "/admin/access",
    {
      schema: {
        tags,
        summary: "Whether you are an operator (200) or not (403)",
        security,
        response: { 200: z.object({ admin: z.literal(true) }), ...errors },
      },
      onRequest: requireOperator,
    },
    async () => ({ admin: true as const }),
  );

  app.get(
    "/admin/overview",
    {
      schema: {
        tags,
        summary: "The platform's figures for a period, disputes, debts, top apps and creators",
        security,
        querystring: AdminPeriodQuerySchema,
        response: { 200: AdminOverviewSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      return adminOverview(db, parseDateRange(request.query, { defaultDays: 30, maxDays: MAX_PERIOD_DAYS }));
    },
  );

  app.get(
    "/admin/exposure",
    {
      schema: {
        tags,
        summary:
          "What refunds and disputes of card top-ups could still cost: earnings inside the payout hold, debts, the platform's loss, open disputes",
        security,
        response: { 200: AdminExposureSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async () => adminExposure(db, new Date(), config.payouts.holdDays),
  );

  app.get(
    "/admin/audit",
    {
      schema: {
        tags,
        summary: "The audit log, newest first",
        security,
        querystring: z.object({
          before: z.coerce.number().int().positive().optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
        response: { 200: z.object({ entries: z.array(AuditEntrySchema) }), ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      const rows = await listAudit(db, request.query);
      return {
        entries: rows.map((row) => ({
          id: row.id,
          actor_email: row.actorEmail,
          action: row.action,
          target_kind: row.targetKind,
          target_id: row.targetId,
          reason: row.reason,
          details: row.details as Record<string, unknown>,
          created_at: row.createdAt.toISOString(),
        })),
      };
    },
  );

  for (const [segment, kind] of [
    ["apps", "application"],
    ["users", "user"],
  ] as const) {
    for (const suspended of [true, false]) {
      app.post(
        `/admin/${segment}/:id/${suspended ? "suspend" : "unsuspend"}`,
        {
          schema: {
            tags,
            summary: `${suspended ? "Suspend" : "Lift the suspension of"} ${kind === "user" ? "a user" : "an app"}, with a reason`,
            security,
            params: z.object({ id: UuidSchema }),
            body: SuspendSchema,
            response: { 200: z.object({ suspended: z.boolean(), changed: z.boolean() }), ...errors },
          },
          onRequest: requireOperator,
        },
        async (request) => {
          const { changed } = await setSuspended(db, actorOf(request), {
            kind,
            id: request.params.id,
            reason: request.body.reason,
            suspended,
          });
          return { suspended, changed };
        },
      );
    }
  }

  // The sandbox's refunds and disputes: the same code as Stripe's charge.refunded and
  // charge.dispute.* events (billing/reversals.ts), for an operator on a sandbox server.
  const reverse = (request: FastifyRequest, paymentIntentId: string, fact: ReversalFact) => {
    requireSandbox();
    return reverseSandboxPayment(db, {
      paymentIntentId,
      fact,
      actor: actorOf(request),
      payoutHoldMs: config.payoutHoldMs,
    });
  };

  app.post(
    "/admin/sandbox/refunds",
    {
      schema: {
        tags,
        summary: "Refund a sandbox card payment (all of what is left, or amount_cents)",
        security,
        body: SandboxRefundSchema,
        response: { 200: ReversalResultSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      requireSandbox();
      const { payment_intent_id: intent } = request.body;
      const amountCents = await sandboxRefundAmount(db, intent, request.body.amount_cents);
      return reverse(request, intent, {
        kind: "refund",
        externalId: `re_sbx_${randomBytes(12).toString("hex")}`,
        amountCents,
      });
    },
  );

  app.post(
    "/admin/sandbox/disputes",
    {
      schema: {
        tags,
        summary: "Open a dispute (chargeback) on a sandbox card payment",
        security,
        body: SandboxDisputeSchema,
        response: { 200: ReversalResultSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      requireSandbox();
      const { payment_intent_id: intent, reason } = request.body;
      const amountCents = request.body.amount_cents ?? (await sandboxPaymentAmount(db, intent));
      return reverse(request, intent, {
        kind: "dispute",
        externalId: `dp_sbx_${randomBytes(12).toString("hex")}`,
        amountCents,
        status: "open",
        reason,
      });
    },
  );

  app.post(
    "/admin/sandbox/disputes/:id/close",
    {
      schema: {
        tags,
        summary: "Close a sandbox dispute as won (the money comes back) or lost",
        security,
        // The dispute's own id (`dp_sbx_…`, as Stripe's `dp_…`), not one of our rows' UUIDs.
        params: z.object({ id: z.string().max(100) }),
        body: SandboxDisputeCloseSchema,
        response: { 200: ReversalResultSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      requireSandbox();
      const dispute = await findSandboxDispute(db, request.params.id);
      return reverse(request, dispute.intent, {
        kind: "dispute",
        externalId: request.params.id,
        amountCents: dispute.amount,
        status: request.body.status,
        reason: dispute.reason,
      });
    },
  );
};
