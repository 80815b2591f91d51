import {
  ApiErrorSchema,
  CreatePaymentIntentSchema,
  EarningsHistoryQuerySchema,
  EarningsHistorySchema,
  PaymentIntentSchema,
  PaymentMethodListSchema,
  PaymentResultSchema,
  SandboxConfirmSchema,
  WalletSchema,
  WalletStatementQuerySchema,
  WalletStatementSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { AppError } from "../../lib/errors.ts";
import { findApplicationBySlug } from "../applications/applications.service.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { earningsHistory } from "./earnings-history.ts";
import { refuseWrongPaymentAmount } from "./payment-intents.ts";
import { listPaymentMethods } from "./payment-methods.service.ts";
import { confirmSandboxPayment, createSandboxPaymentIntent } from "./sandbox-gateway.ts";
import { walletStatement } from "./statement.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import { getWallet } from "./wallet.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 503: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["billing"];

/** Wallets and payments. Stripe arrives with its keys; until then the sandbox processor answers. */
export const billingRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  config: Config;
  stripe: StripeGateway | undefined;
}> = async (app, { db, guards, config, stripe }) => {
  const gateway = stripe ? ("stripe" as const) : ("sandbox" as const);
  const requireSandbox = () => {
    if (gateway !== "sandbox")
      throw new AppError("bad_request", "This server takes real payments through Stripe");
    if (config.isProduction)
      throw new AppError(
        "unavailable",
        "Sandbox payments are disabled in production: set STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY",
      );
  };

  app.get(
    "/wallet/",
    {
      schema: {
        tags,
        summary: "Your wallet balance, earnings and latest movements",
        security,
        response: { 200: WalletSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => getWallet(db, currentUser(request).id, gateway),
  );

  app.get(
    "/wallet/statement/",
    {
      schema: {
        tags,
        summary: "Your wallet statement: paid calls per app and day, top-ups, plan payments, refunds",
        description:
          "Newest first. One line per app and UTC day for the calls you paid for, and one per other movement of your wallet; money set aside for calls in flight is not shown. Pass `next_cursor` as `cursor` for older lines.",
        security,
        querystring: WalletStatementQuerySchema,
        response: { 200: WalletStatementSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => walletStatement(db, currentUser(request).id, request.query),
  );

  app.get(
    "/wallet/earnings/",
    {
      schema: {
        tags,
        summary: "Your earnings history: one line per UTC day and kind (a day's paid calls, payouts...)",
        description:
          "Newest day first, `days` whole days per page. A day's paid calls are one line (`kind: calls`) counting the calls and how many x402 paid; any other movement of your earnings is one line per day and kind. Pass `next_cursor` as `cursor` for older days.",
        security,
        querystring: EarningsHistoryQuerySchema,
        response: { 200: EarningsHistorySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => earningsHistory(db, currentUser(request).id, request.query),
  );

  app.get(
    "/wallet/payment-methods/",
    {
      schema: {
        tags,
        summary: "Your saved cards, the default first (the same as any app's payment-methods list)",
        description:
          "What a top-up or a plan's checkout offers before a new card: with the sandbox processor, pass one's `id` as `payment_method_id` to `POST /billing/sandbox/confirm/`.",
        security,
        response: { 200: PaymentMethodListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => listPaymentMethods(db, currentUser(request).id),
  );

  const createIntent = async (
    user: LocalUser,
    body: z.output<typeof CreatePaymentIntentSchema>,
    appId?: string,
  ) => {
    await refuseWrongPaymentAmount(db, { amount: body.amount, packageId: body.package_id, appId });
    if (stripe)
      return stripe.createPaymentIntent(db, user, {
        amount: body.amount,
        currency: body.currency,
        packageId: body.package_id,
      });
    requireSandbox();
    return createSandboxPaymentIntent(db, user.id, body.amount, body.currency, body.package_id);
  };

  // Stripe's webhooks are the source of truth for card payments; the signature covers the raw body.
  await app.register(async (webhooks) => {
    webhooks.removeContentTypeParser("application/json");
    webhooks.addContentTypeParser(
      "application/json",
      { parseAs: "buffer", bodyLimit: 512 * 1024 },
      (_request, body, done) => done(null, body),
    );
    webhooks.post(
      "/billing/stripe/webhook",
      {
        // Signed, so read before it can be checked: Stripe's events fit well within this.
        bodyLimit: 512 * 1024,
        schema: {
          tags,
          summary: "Stripe webhook endpoint (signed)",
          response: { 200: z.object({ received: z.literal(true), duplicate: z.boolean() }), ...errors },
        },
      },
      async (request) => {
        if (!stripe) throw new AppError("not_found", "Stripe is not configured on this server");
        const signature = request.headers["stripe-signature"];
        const result = await stripe.handleWebhook(
          db,
          request.body as Buffer,
          typeof signature === "string" ? signature : undefined,
        );
        return { received: true as const, duplicate: result.duplicate };
      },
    );
  });

  app.post(
    "/wallet/payment-intents/",
    {
      schema: {
        tags,
        summary: "Start a wallet top-up (amount in cents); confirm it with the card form",
        security,
        body: CreatePaymentIntentSchema,
        response: { 200: PaymentIntentSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => createIntent(currentUser(request), request.body),
  );

  app.post(
    "/app/:app/create-payment-intent/",
    {
      schema: {
        tags,
        summary: "SPEC's payment intent for an app's billing page (amount in cents, 0 to set up a card)",
        security,
        params: z.object({ app: z.string().max(100) }),
        body: CreatePaymentIntentSchema,
        response: { 200: PaymentIntentSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const application = await findApplicationBySlug(db, request.params.app);
      const caller = currentUser(request);
      if (
        !application ||
        (application.ownerId !== caller.id &&
          (application.visibility === "private" || application.status !== "live"))
      ) {
        throw new AppError("not_found", "Application not found");
      }
      return createIntent(caller, request.body, application.id);
    },
  );

  app.post(
    "/billing/sandbox/confirm/",
    {
      schema: {
        tags,
        summary: "Confirm a sandbox payment with a test card (no real money)",
        security,
        body: SandboxConfirmSchema,
        response: { 200: PaymentResultSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      requireSandbox();
      return confirmSandboxPayment(db, currentUser(request).id, request.body);
    },
  );
};
