import {
  AnalyticsDaysQuerySchema,
  ApiErrorSchema,
  AppPerformanceSchema,
  AppUsageAnalyticsSchema,
  GlobalDashboardSchema,
  MoneyFiguresSchema,
  OwnerVersionFiguresSchema,
  RecentInvocationsQuerySchema,
  RecentInvocationsSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { getOwnApplication } from "../applications/applications.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import {
  getAppPerformance,
  getAppUsage,
  getDashboard,
  getOwnerFigures,
  getOwnerVersionFigures,
  getRecentInvocations,
} from "./analytics.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["analytics"];
const SlugParams = z.object({ slug: z.string().max(100) });

/** SPEC §7 Analytics: only the caller's own applications count; days are UTC days. */
export const analyticsRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  const onRequest = guards.requireUser;
  app.get(
    "/analytics/dashboard/",
    {
      schema: {
        tags,
        summary: "Totals, daily series, per-app figures and errors across your apps",
        security,
        querystring: AnalyticsDaysQuerySchema,
        response: { 200: GlobalDashboardSchema, ...errors },
      },
      onRequest,
    },
    async (request) => getDashboard(db, currentUser(request).id, request.query.days),
  );
  app.get(
    "/analytics/figures/",
    {
      schema: {
        tags,
        summary: "Gross, platform fee, model cost and net across your apps over the window",
        description:
          "The same figures, from the same daily rollups, as each app's `figures` in its usage analytics: this is their sum over your apps.",
        security,
        querystring: AnalyticsDaysQuerySchema,
        response: { 200: MoneyFiguresSchema, ...errors },
      },
      onRequest,
    },
    async (request) => getOwnerFigures(db, currentUser(request).id, request.query.days),
  );
  app.get(
    "/analytics/figures/versions/",
    {
      schema: {
        tags,
        summary: "Your statement by app and prompt version: calls, gross, fee, model cost and margin",
        description:
          "The same totals as `GET /analytics/figures/` (`figures`), broken down by app and by the prompt version that answered each call, from the per-version daily rollups. Each app's versions add up exactly to its share; `version` null gathers calls that name no version (workflow apps, calls from before versions). Refunds are of card payments, not of calls, so they are not broken down by version.",
        security,
        querystring: AnalyticsDaysQuerySchema,
        response: { 200: OwnerVersionFiguresSchema, ...errors },
      },
      onRequest,
    },
    async (request) => getOwnerVersionFigures(db, currentUser(request).id, request.query.days),
  );
  app.get(
    "/app/:slug/analytics/usage/",
    {
      schema: {
        tags,
        summary: "An app's invocations, users and revenue over the window, with a breakdown by version",
        description:
          "`by_version` gives each prompt version's calls, success rate, mean response time, tokens, gross, fee, model cost and margin (net) over the window, from the per-version daily rollups; the rows add up exactly to `figures`. `version` null gathers calls that name no version (workflow apps, calls from before versions). Refunds are of card payments, not of calls, so they are not broken down by version.",
        security,
        params: SlugParams,
        querystring: AnalyticsDaysQuerySchema,
        response: { 200: AppUsageAnalyticsSchema, ...errors },
      },
      onRequest,
    },
    async (request) =>
      getAppUsage(
        db,
        await getOwnApplication(db, currentUser(request), request.params.slug),
        request.query.days,
      ),
  );
  app.get(
    "/app/:slug/analytics/performance/",
    {
      schema: {
        tags,
        summary: "An app's success rate and response times over the window",
        security,
        params: SlugParams,
        querystring: AnalyticsDaysQuerySchema,
        response: { 200: AppPerformanceSchema, ...errors },
      },
      onRequest,
    },
    async (request) =>
      getAppPerformance(
        db,
        await getOwnApplication(db, currentUser(request), request.params.slug),
        request.query.days,
      ),
  );
  app.get(
    "/app/:slug/analytics/invocations/",
    {
      schema: {
        tags,
        summary: "An app's latest invocations",
        security,
        params: SlugParams,
        querystring: RecentInvocationsQuerySchema,
        response: { 200: RecentInvocationsSchema, ...errors },
      },
      onRequest,
    },
    async (request) =>
      getRecentInvocations(
        db,
        await getOwnApplication(db, currentUser(request), request.params.slug),
        request.query.limit,
      ),
  );
};
