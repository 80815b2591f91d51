import {
  CreatePromotionCodeSchema,
  PromotionCodeListSchema,
  PromotionCodeSchema,
  RedeemPromotionCodeSchema,
  SponsoredCreditListSchema,
  SponsoredCreditSchema,
  TrialOfferSchema,
  UpdateTrialOfferSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../../db/client.ts";
import { errorResponses } from "../../../lib/api-document.ts";
import { getOwnApplication } from "../../applications/applications.service.ts";
import { findCallableApp } from "../../applications/callable-app.ts";
import { type AuthGuards, currentUser } from "../../auth/authenticate.ts";
import { listCredits } from "./credits.ts";
import {
  createPromotionCode,
  endPromotionCode,
  listPromotionCodes,
  redeemPromotionCode,
} from "./promotion-codes.ts";
import { getTrialOffer, setTrialOffer, startTrial } from "./trials.ts";

const errors = errorResponses(400, 401, 404, 409);
const security = [{ bearerAuth: [] }];
const tags = ["promotions"];
const AppParams = z.object({ app: z.string().max(100) });
const CodeParams = z.object({ id: UuidSchema });

/**
 * Free trials and promotion codes (issue 42, docs/decisions/080). The creator offers an app's
 * trial and manages their codes; a consumer starts a trial, redeems a code, and lists what they
 * were given. A trial's app must be one the caller may call; any other is a 404.
 */
export const sponsoredRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  const onRequest = guards.requireUser;

  app.get(
    "/app/:app/trial/",
    {
      schema: {
        tags,
        summary: "An app's free trial: calls offered, and whether you took it",
        security,
        params: AppParams,
        response: { 200: TrialOfferSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const user = currentUser(request);
      return getTrialOffer(db, await findCallableApp(db, request.params.app, user), user);
    },
  );
  app.put(
    "/app/:app/trial/",
    {
      schema: {
        tags,
        summary: "Offer a free trial of N calls per consumer, paid from your wallet (app owner; 0 ends it)",
        security,
        params: AppParams,
        body: UpdateTrialOfferSchema,
        response: { 200: TrialOfferSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const user = currentUser(request);
      const application = await getOwnApplication(db, user, request.params.app);
      await setTrialOffer(db, application, request.body.trial_calls);
      return getTrialOffer(db, application, user);
    },
  );
  app.post(
    "/app/:app/trial/",
    {
      schema: {
        tags,
        summary: "Start your free trial of an app (once per person: account, card, payer address)",
        security,
        params: AppParams,
        response: { 201: SponsoredCreditSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      const user = currentUser(request);
      const application = await findCallableApp(db, request.params.app, user);
      return reply.status(201).send(await startTrial(db, application, user));
    },
  );

  app.get(
    "/promotion-codes/",
    {
      schema: {
        tags,
        summary: "Your promotion codes (creator)",
        security,
        response: { 200: PromotionCodeListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => ({ data: await listPromotionCodes(db, currentUser(request).id) }),
  );
  app.post(
    "/promotion-codes/",
    {
      schema: {
        tags,
        summary: "Create a promotion code: credit (an amount, or a percent of a top-up) on your apps",
        security,
        body: CreatePromotionCodeSchema,
        response: { 201: PromotionCodeSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      const user = currentUser(request);
      const appId = request.body.app ? (await getOwnApplication(db, user, request.body.app)).id : null;
      return reply.status(201).send(await createPromotionCode(db, user, request.body, appId));
    },
  );
  app.delete(
    "/promotion-codes/:id/",
    {
      schema: {
        tags,
        summary: "End a promotion code: no more redemptions (credit given stays)",
        security,
        params: CodeParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      await endPromotionCode(db, currentUser(request).id, request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    "/promotion-codes/redeem/",
    {
      schema: {
        tags,
        summary: "Redeem a promotion code for credit on its creator's apps",
        security,
        body: RedeemPromotionCodeSchema,
        response: { 201: SponsoredCreditSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) =>
      reply.status(201).send(await redeemPromotionCode(db, currentUser(request), request.body.code)),
  );
  app.get(
    "/wallet/credits/",
    {
      schema: {
        tags,
        summary: "Your free trials and promotional credit: calls or credit left, app, expiry",
        security,
        response: { 200: SponsoredCreditListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => ({ data: await listCredits(db, currentUser(request).id) }),
  );
};
