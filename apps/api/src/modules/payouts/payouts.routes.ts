import { randomUUID } from "node:crypto";
import { parse as parseQuery } from "node:querystring";
import {
  AdvanceClockSchema,
  EarningsSummarySchema,
  OnboardingLinkSchema,
  PayoutSchema,
  SandboxClockSchema,
  WithdrawSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod, ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { errorResponses } from "../../lib/api-document.ts";
import { csvField } from "../../lib/csv.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { microsToCents } from "../../lib/money.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { advanceClock, clockNow, clockOffsetMs, DAY_MS, MAX_CLOCK_OFFSET_DAYS } from "./clock.ts";
import { availability, earningsLines } from "./payout-postings.ts";
import {
  accountState,
  applyAccountUpdated,
  completeSandboxOnboarding,
  connectAccountOf,
  type PayoutDeps,
  type PayoutRow,
  payoutHistory,
  payoutTotals,
  requireSandbox,
  sandboxOnboardingAccount,
  startOnboarding,
  withdraw,
} from "./payouts.service.ts";
import { sandboxOnboardingPage } from "./sandbox-onboarding-page.ts";

const errors = errorResponses(400, 401, 403, 404, 409, 502, 503);
const security = [{ bearerAuth: [] }];
const tags = ["payouts"];

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function toPayout(row: PayoutRow): z.infer<typeof PayoutSchema> {
  return {
    id: row.id,
    amount_cents: row.amountCents,
    currency: row.currency,
    status: row.status,
    automatic: row.automatic,
    failure_code: row.failureCode,
    failure_reason: row.failureReason,
    created_at: row.createdAt.toISOString(),
    in_transit_at: iso(row.inTransitAt),
    paid_at: iso(row.paidAt),
    failed_at: iso(row.failedAt),
  };
}

/** Micro-dollars as dollars with six decimals: exact, whatever the amount. */
function microsAsDollars(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, "0")}`;
}

const LINE_TYPES: Record<string, string> = {
  payout: "payout",
  payout_return: "payout_return",
  settle: "earnings",
  subscription: "earnings",
};

/** Creator payouts: the Earnings screen's API, Withdraw, onboarding, statements, the sandbox's clock. */
export const payoutsRoutes: FastifyPluginAsyncZod<PayoutDeps & { guards: AuthGuards }> = async (
  app,
  { guards, ...deps },
) => {
  const { db, config } = deps;

  app.get(
    "/payouts/",
    {
      schema: {
        tags,
        summary: "Your earnings: available, pending (with dates), in transit, paid out; your payouts",
        security,
        response: { 200: EarningsSummarySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      let account = await connectAccountOf(db, user.id);
      // Back from Stripe's onboarding before its webhook: read the account's flags once.
      if (deps.connect && account?.gateway === "stripe" && !account.payoutsEnabled) {
        try {
          await applyAccountUpdated(db, await deps.connect.retrieveAccount(account.externalId));
          account = await connectAccountOf(db, user.id);
        } catch (err) {
          request.log.warn({ err }, "could not read the connected account from Stripe");
        }
      }
      const now = deps.connect ? new Date() : await clockNow(db, user.id);
      const [avail, totals, history] = await Promise.all([
        availability(db, user.id, now, config.payouts.holdDays),
        payoutTotals(db, user.id),
        payoutHistory(db, user.id),
      ]);
      return {
        gateway: deps.connect ? ("stripe" as const) : ("sandbox" as const),
        currency: "usd" as const,
        account: {
          state: accountState(account),
          details_submitted: account?.detailsSubmitted ?? false,
          payouts_enabled: account?.payoutsEnabled ?? false,
          disabled_reason: account?.disabledReason ?? null,
          requirements_due: account?.requirementsDue ?? [],
        },
        balance_micros: avail.balance,
        available_micros: avail.available,
        reserved_micros: avail.reserved,
        withdrawable_cents: microsToCents(avail.available),
        pending: avail.pending.map((part) => ({
          amount_micros: part.amount,
          available_at: part.availableAt.toISOString(),
        })),
        in_transit_cents: totals.inTransit,
        paid_out_cents: totals.paid,
        minimum_cents: config.payouts.minimumCents,
        hold_days: config.payouts.holdDays,
        schedule: config.payouts.schedule,
        now: now.toISOString(),
        payouts: history.map(toPayout),
      };
    },
  );

  app.post(
    "/payouts/",
    {
      schema: {
        tags,
        summary: "Withdraw available earnings to your bank account (Idempotency-Key honoured)",
        security,
        body: WithdrawSchema.nullish(),
        response: { 200: PayoutSchema, 201: PayoutSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const header = request.headers["idempotency-key"];
      if (header !== undefined && (typeof header !== "string" || !/^[\x21-\x7e]{1,200}$/.test(header)))
        throw new AppError("bad_request", "Idempotency-Key must be 1 to 200 visible ASCII characters", {
          fields: { "Idempotency-Key": "must be 1 to 200 visible ASCII characters" },
        });
      const { payout, replayed } = await withdraw(deps, currentUser(request).id, {
        amountCents: request.body?.amount_cents,
        idempotencyKey: `manual:${typeof header === "string" ? header : randomUUID()}`,
      });
      if (replayed) reply.header("idempotent-replayed", "true");
      return reply.status(replayed ? 200 : 201).send(toPayout(payout));
    },
  );

  app.post(
    "/payouts/onboarding",
    {
      schema: {
        tags,
        summary: "Set up payouts: a link to Stripe's onboarding (or the sandbox's)",
        security,
        body: z.strictObject({}).nullish(),
        response: { 200: OnboardingLinkSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      // Payouts go to whoever owns the address: it must be proven first (docs/decisions/041). For
      // an organization, the member setting them up proves theirs (decision 084).
      const person = request.person ?? user;
      if (!person.emailVerified)
        throw new AppError(
          "email_unverified",
          `Verify your email address before setting up payouts: open the link we mailed to ${person.email}, or resend it`,
        );
      try {
        return await startOnboarding(deps, user);
      } catch (error) {
        if (error instanceof AppError) throw error;
        request.log.warn({ err: error }, "Stripe onboarding failed");
        throw new AppError("upstream_failed", "Stripe could not start onboarding; try again");
      }
    },
  );

  app.get(
    "/payouts/statement.csv",
    {
      schema: {
        tags,
        summary: "Every line of your earnings: credits, payouts and returned payouts (CSV)",
        security,
        response: { 200: z.string(), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const user = currentUser(request);
      const [lines, history] = await Promise.all([
        earningsLines(db, user.id),
        payoutHistory(db, user.id, 100_000),
      ]);
      const byId = new Map(history.map((p) => [p.id, p]));
      const rows = [
        ["date", "type", "description", "amount_usd", "payout_id", "payout_status", "failure_reason"],
      ];
      for (const line of lines) {
        const payout = line.kind.startsWith("payout") ? byId.get(line.reference) : undefined;
        rows.push([
          line.at.toISOString(),
          LINE_TYPES[line.kind] ?? line.kind,
          line.description,
          microsAsDollars(line.amount),
          payout?.id ?? "",
          payout?.status ?? "",
          payout?.failureReason ?? "",
        ]);
      }
      reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", 'attachment; filename="promptmint-earnings.csv"')
        .header("cache-control", "no-store");
      return `${rows.map((row) => row.map(csvField).join(",")).join("\r\n")}\r\n`;
    },
  );

  // The sandbox's test clock, each creator's own: moves their "now" ahead for their availability and
  // their schedule, in every process (decision 046).
  const clockOf = (offset: number) => ({
    now: new Date(Date.now() + offset).toISOString(),
    offset_days: offset / DAY_MS,
    max_offset_days: MAX_CLOCK_OFFSET_DAYS,
  });
  app.get(
    "/payouts/sandbox/clock",
    {
      schema: {
        tags,
        summary: "Your own sandbox payouts clock",
        security,
        response: { 200: SandboxClockSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => clockOf(await clockOffsetMs(db, currentUser(request).id)),
  );
  app.post(
    "/payouts/sandbox/clock",
    {
      schema: {
        tags,
        summary:
          "Advance your own sandbox payouts clock: 1 to 30 days a step, at most 90 days ahead (sandbox only)",
        security,
        body: AdvanceClockSchema,
        response: { 200: SandboxClockSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      requireSandbox(deps);
      return clockOf(await advanceClock(db, currentUser(request).id, request.body.advance_days));
    },
  );

  // The sandbox's onboarding page, reached through the single-use link POST /payouts/onboarding gave.
  const tokenParams = z.object({
    token: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, "is not an onboarding link"),
  });
  app.get(
    "/payouts/sandbox/onboarding/:token",
    { schema: { hide: true, params: tokenParams } },
    async (request, reply) => {
      requireSandbox(deps);
      const account = await sandboxOnboardingAccount(db, request.params.token);
      reply.header("content-type", "text/html; charset=utf-8").header("cache-control", "no-store");
      if (!account)
        return reply
          .status(404)
          .send(sandboxOnboardingPage({ expired: true, returnUrl: `${config.publicUrl}/earnings` }));
      return sandboxOnboardingPage({ expired: false, returnUrl: `${config.publicUrl}/earnings` });
    },
  );
  await app.register(async (form) => {
    form.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 4096 },
      (_request, body, done) => done(null, parseQuery(body as string)),
    );
    form.withTypeProvider<ZodTypeProvider>().post(
      "/payouts/sandbox/onboarding/:token",
      {
        schema: {
          hide: true,
          params: tokenParams,
          body: z.object({ bank: z.string().optional() }).passthrough(),
        },
      },
      async (request, reply) => {
        requireSandbox(deps);
        const bank = request.body.bank;
        if (bank !== "succeeds" && bank !== "fails")
          throw invalidFields({ bank: "must be succeeds or fails" });
        if (!(await completeSandboxOnboarding(db, request.params.token, bank)))
          throw new AppError("not_found", "This onboarding link has expired or was already used");
        return reply.redirect(`${config.publicUrl}/earnings?onboarding=return`, 303);
      },
    );
  });
};
