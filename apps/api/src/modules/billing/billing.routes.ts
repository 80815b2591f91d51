import {
  ApiErrorSchema,
  CreatePaymentIntentSchema,
  MIN_TOP_UP_CENTS,
  PaymentIntentSchema,
  PaymentResultSchema,
  SandboxConfirmSchema,
  WalletSchema,
} from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { packages } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { findApplicationBySlug } from "../applications/applications.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { confirmSandboxPayment, createSandboxPaymentIntent } from "./sandbox-gateway.ts";
import { getWallet } from "./wallet.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 503: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["billing"];

/** Wallets and payments. Stripe arrives with its keys; until then the sandbox processor answers. */
export const billingRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  config: Config;
}> = async (app, { db, guards, config }) => {
  const gateway =
    config.stripe.secretKey && config.stripe.publishableKey ? ("stripe" as const) : ("sandbox" as const);
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

  const createIntent = async (
    userId: string,
    body: z.output<typeof CreatePaymentIntentSchema>,
    appId?: string,
  ) => {
    if (body.package_id) {
      const [plan] = /^[0-9a-f-]{36}$/i.test(body.package_id)
        ? await db.select().from(packages).where(eq(packages.id, body.package_id)).limit(1)
        : [];
      if (!plan || (appId && plan.applicationId !== appId) || !plan.isActive) {
        throw invalidFields({ package_id: "is not an available plan of this app" });
      }
      if (plan.priceCents !== body.amount)
        throw invalidFields({ amount: `must equal the plan's price, ${plan.priceCents} cents` });
    } else if (body.amount !== 0 && body.amount < MIN_TOP_UP_CENTS) {
      throw invalidFields({ amount: `must be at least ${MIN_TOP_UP_CENTS} cents ($1.00)` });
    }
    requireSandbox();
    return createSandboxPaymentIntent(db, userId, body.amount, body.currency, body.package_id);
  };

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
    async (request) => createIntent(currentUser(request).id, request.body),
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
      return createIntent(caller.id, request.body, application.id);
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
