import {
  AccountSubscriptionListSchema,
  CreatePackageSchema,
  CreatePaymentMethodSchema,
  CreateSubscriptionSchema,
  PackageListSchema,
  PackageSchema,
  PaymentMethodListSchema,
  PaymentMethodSchema,
  SubscriptionListSchema,
  SubscriptionSchema,
  UpdatePackageSchema,
  UpdatePaymentMethodSchema,
  UpdateSubscriptionSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import { invalidFields } from "../../lib/errors.ts";
import { findApplicationBySlugCached, getOwnApplication } from "../applications/applications.service.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { refuseUncoveredPrice } from "../prompts/cost-guard.ts";
import {
  addPaymentMethod,
  listPaymentMethods,
  makeDefault,
  removePaymentMethod,
} from "./payment-methods.service.ts";
import { latestTerms, termsOfPlan } from "./plan-terms.ts";
import { createPackage, deactivatePackage, findPackage, listPackages, updatePackage } from "./plans.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import {
  getSubscription,
  isSubscriptionOf,
  listAccountSubscriptions,
  listSubscriptions,
  setCancelAtPeriodEnd,
  subscribe,
  subscribeWithCard,
} from "./subscriptions.ts";

const errors = errorResponses(400, 401, 402, 404, 409);
const security = [{ bearerAuth: [] }];
const tags = ["billing"];
const AppParams = z.object({ app: z.string().max(100) });
const ItemParams = AppParams.extend({ id: UuidSchema });

/**
 * SPEC §7 Billing: plans of an app (its owner manages them), the caller's subscriptions to it,
 * and the caller's saved cards. The app must be one the caller may call (owner, or live and not
 * private); anything else is a 404.
 */
export const plansRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
  /** How long a raised plan price is announced before a period is charged at it. */
  priceNoticeMs: number;
  publicUrl: string;
  stripe: StripeGateway | undefined;
}> = async (app, { db, guards, feePercent, priceNoticeMs, publicUrl, stripe }) => {
  const visible = (request: Parameters<typeof currentUser>[0], slug: string) =>
    findCallableApp(db, slug, currentUser(request));
  const owned = (request: Parameters<typeof currentUser>[0], slug: string) =>
    getOwnApplication(db, currentUser(request), slug);
  const onRequest = guards.requireUser;
  /**
   * The app of the caller's subscription `id`: one they may call, or one gone private or draft since
   * they subscribed (so My subscriptions can still cancel it). Anyone else gets the app's 404.
   */
  const subscribedApp = async (request: Parameters<typeof currentUser>[0], slug: string, id: string) => {
    try {
      return await visible(request, slug);
    } catch (refused) {
      const application = await findApplicationBySlugCached(db, slug);
      if (application && (await isSubscriptionOf(db, application.id, currentUser(request).id, id)))
        return application;
      throw refused;
    }
  };
  /** Sets whether the caller's subscription `params.id` to app `params.app` ends with its period. */
  const cancelAtPeriodEnd = async (
    request: Parameters<typeof currentUser>[0] & { params: { app: string; id: string } },
    cancel: boolean,
  ) =>
    setCancelAtPeriodEnd(db, {
      app: await subscribedApp(request, request.params.app, request.params.id),
      subscriberId: currentUser(request).id,
      id: request.params.id,
      cancel,
      stripe,
    });

  app.get(
    "/app/:app/packages/",
    {
      schema: {
        tags,
        summary: "An app's plans",
        security,
        params: AppParams,
        response: { 200: PackageListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => listPackages(db, await visible(request, request.params.app)),
  );
  app.post(
    "/app/:app/packages/",
    {
      schema: {
        tags,
        summary: "Create a plan (app owner)",
        security,
        params: AppParams,
        body: CreatePackageSchema,
        response: { 201: PackageSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      const application = await owned(request, request.params.app);
      // A plan's price must cover its included calls' worst-case model cost (docs/decisions/026).
      await refuseUncoveredPrice(db, {
        app: application,
        feePercent,
        plan: {
          name: request.body.name,
          priceCents: request.body.price_cents,
          includedCalls: request.body.included_calls,
          isActive: request.body.is_active,
        },
      });
      return reply.status(201).send(await createPackage(db, application, request.body));
    },
  );
  app.patch(
    "/app/:app/packages/:id/",
    {
      schema: {
        tags,
        summary:
          "Change a plan (app owner): a change giving subscribers less (higher price, fewer calls) takes effect after the notice period (pending_terms.effective_from), one at least as good at once",
        security,
        params: ItemParams,
        body: UpdatePackageSchema,
        response: { 200: PackageSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const application = await owned(request, request.params.app);
      const plan = await findPackage(db, application, request.params.id);
      const latest = latestTerms(await termsOfPlan(db, plan.id));
      await refuseUncoveredPrice(db, {
        app: application,
        feePercent,
        plan: {
          id: plan.id,
          name: request.body.name ?? plan.name,
          priceCents: request.body.price_cents ?? latest.priceCents,
          includedCalls: request.body.included_calls ?? latest.includedCalls,
          isActive: request.body.is_active ?? plan.isActive,
        },
      });
      return updatePackage(db, application, request.params.id, request.body, { priceNoticeMs });
    },
  );
  app.delete(
    "/app/:app/packages/:id/",
    {
      schema: {
        tags,
        summary: "Withdraw a plan from sale (app owner); its subscriptions end at period end",
        security,
        params: ItemParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      await deactivatePackage(db, await owned(request, request.params.app), request.params.id, stripe);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/subscriptions/",
    {
      schema: {
        tags,
        summary: "All your subscriptions, across apps",
        description:
          "Newest first, each with its app's slug and name. Cancel or resume one at `/app/{app}/subscriptions/{id}/` (PATCH `cancel_at_period_end`).",
        security,
        response: { 200: AccountSubscriptionListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => listAccountSubscriptions(db, currentUser(request).id),
  );
  app.get(
    "/app/:app/subscriptions/",
    {
      schema: {
        tags,
        summary: "Your subscriptions to an app",
        security,
        params: AppParams,
        response: { 200: SubscriptionListSchema, ...errors },
      },
      onRequest,
    },
    async (request) =>
      listSubscriptions(db, await visible(request, request.params.app), currentUser(request).id),
  );
  app.post(
    "/app/:app/subscriptions/",
    {
      schema: {
        tags,
        summary:
          "Subscribe to a plan: renewed on a saved card by Stripe, or paid by a card payment for it or from your wallet",
        security,
        params: AppParams,
        body: CreateSubscriptionSchema,
        response: { 201: SubscriptionSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      const { package_id: packageId, payment_intent_id, payment_method_id } = request.body;
      const application = await visible(request, request.params.app);
      if (payment_intent_id && payment_method_id)
        throw invalidFields({ payment_method_id: "cannot be combined with payment_intent_id" });
      const subscription = payment_method_id
        ? await subscribeWithCard(db, {
            app: application,
            user: currentUser(request),
            packageId,
            paymentMethodId: payment_method_id,
            stripe,
          })
        : await subscribe(db, {
            app: application,
            subscriberId: currentUser(request).id,
            packageId,
            paymentIntentId: payment_intent_id,
            feePercent,
            topUpUrl: `${publicUrl}/wallet`,
          });
      return reply.status(201).send(subscription);
    },
  );
  app.get(
    "/app/:app/subscriptions/:id/",
    {
      schema: {
        tags,
        summary: "One of your subscriptions",
        security,
        params: ItemParams,
        response: { 200: SubscriptionSchema, ...errors },
      },
      onRequest,
    },
    async (request) =>
      getSubscription(
        db,
        await subscribedApp(request, request.params.app, request.params.id),
        currentUser(request).id,
        request.params.id,
      ),
  );
  app.patch(
    "/app/:app/subscriptions/:id/",
    {
      schema: {
        tags,
        summary: "Cancel at period end, or keep it",
        security,
        params: ItemParams,
        body: UpdateSubscriptionSchema,
        response: { 200: SubscriptionSchema, ...errors },
      },
      onRequest,
    },
    async (request) => cancelAtPeriodEnd(request, request.body.cancel_at_period_end),
  );
  app.post(
    "/app/:app/subscriptions/:id/cancel/",
    {
      schema: {
        tags,
        summary: "Cancel at the end of the current period",
        security,
        params: ItemParams,
        body: z.strictObject({}).nullish(),
        response: { 200: SubscriptionSchema, ...errors },
      },
      onRequest,
    },
    async (request) => cancelAtPeriodEnd(request, true),
  );

  app.get(
    "/app/:app/payment-methods/",
    {
      schema: {
        tags,
        summary: "Your saved cards",
        security,
        params: AppParams,
        response: { 200: PaymentMethodListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      await visible(request, request.params.app);
      return listPaymentMethods(db, currentUser(request).id);
    },
  );
  app.post(
    "/app/:app/payment-methods/",
    {
      schema: {
        tags,
        summary: "Save a card (billing address required)",
        security,
        params: AppParams,
        body: CreatePaymentMethodSchema,
        response: { 201: PaymentMethodSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      await visible(request, request.params.app);
      return reply.status(201).send(await addPaymentMethod(db, currentUser(request), request.body, stripe));
    },
  );
  app.patch(
    "/app/:app/payment-methods/:id/",
    {
      schema: {
        tags,
        summary: "Make a card the default",
        security,
        params: ItemParams,
        body: UpdatePaymentMethodSchema,
        response: { 200: PaymentMethodSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      await visible(request, request.params.app);
      return makeDefault(db, currentUser(request).id, request.params.id);
    },
  );
  app.delete(
    "/app/:app/payment-methods/:id/",
    {
      schema: {
        tags,
        summary: "Remove a saved card",
        security,
        params: ItemParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      await visible(request, request.params.app);
      await removePaymentMethod(db, currentUser(request).id, request.params.id);
      return reply.status(204).send(null);
    },
  );
};
