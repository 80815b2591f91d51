import { existsSync } from "node:fs";
import path from "node:path";
import fastifyMultipart from "@fastify/multipart";
import fastifySwagger from "@fastify/swagger";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { z } from "zod";
import type { Config } from "./config.ts";
import { backgroundFor, type Database, type DatabaseHandle, openDatabase } from "./db/client.ts";
import { deleteStaleSignInFailures } from "./identity/accounts.ts";
import { identityRoutes } from "./identity/identity.routes.ts";
import { deleteExpiredOidcPayloads } from "./identity/oidc-adapter.ts";
import { API_TAGS, publicApiDocument } from "./lib/api-document.ts";
import { limitPublicBodies } from "./lib/body-limits.ts";
import { installBearerCors } from "./lib/cors.ts";
import { installErrorHandler } from "./lib/error-handler.ts";
import { type Job, startJobs } from "./lib/jobs.ts";
import { installJsonBodyParser } from "./lib/json-body.ts";
import { installMetrics } from "./lib/metrics.ts";
import { installNulGuard } from "./lib/nul-guard.ts";
import { createReadableLogStream, installRequestLog } from "./lib/request-log.ts";
import { installSecurityHeaders } from "./lib/security-headers.ts";
import { installShouldRetry } from "./lib/should-retry.ts";
import { installStageTimings } from "./lib/stage-timings.ts";
import { adminRoutes } from "./modules/admin/admin.routes.ts";
import { analyticsRoutes } from "./modules/analytics/analytics.routes.ts";
import { maintainInvocationPartitions } from "./modules/analytics/invocation-partitions.ts";
import { compactRollups } from "./modules/analytics/rollups.ts";
import { applicationsRoutes } from "./modules/applications/applications.routes.ts";
import { authRoutes } from "./modules/auth/auth.routes.ts";
import { billingRoutes } from "./modules/billing/billing.routes.ts";
import { HOLD_SWEEP_INTERVAL_MS } from "./modules/billing/call-checks.ts";
import {
  type CallPayments,
  createCallPayments,
  sweepExpiredHolds,
  sweepExpiredIncludedCalls,
  sweepExpiredModelCostHolds,
  sweepKeyReservations,
  sweepMemberReservations,
  sweepSponsoredCalls,
} from "./modules/billing/call-payment/index.ts";
import { postOutstandingModelCosts } from "./modules/billing/model-costs.ts";
import { creditAbandonedPlanPayments } from "./modules/billing/plan-payments.ts";
import { plansRoutes } from "./modules/billing/plans.routes.ts";
import { receiptsRoutes } from "./modules/billing/receipts.routes.ts";
import { sponsoredRoutes } from "./modules/billing/sponsored/sponsored.routes.ts";
import { renewDueSubscriptions } from "./modules/billing/subscriptions.ts";
import { embedRoutes } from "./modules/embed/embed.routes.ts";
import { sweepEmbedVisitorCalls } from "./modules/embed/embed-limits.ts";
import { widgetRoutes } from "./modules/embed/widget.routes.ts";
import { checkAppHealth } from "./modules/events/app-health.ts";
import { maintainEventPartitions } from "./modules/events/event-partitions.ts";
import { eventsRoutes } from "./modules/events/events.routes.ts";
import { agentDiscoveryRoutes } from "./modules/explore/agent-discovery.routes.ts";
import { type DiscoveryRails, withPaymentInfo } from "./modules/explore/agent-discovery.ts";
import { exploreRoutes } from "./modules/explore/explore.routes.ts";
import { reviewsRoutes } from "./modules/explore/reviews.routes.ts";
import { agentsRoutes } from "./modules/gateway/agents.routes.ts";
import { evalApiRoutes } from "./modules/gateway/eval-api.routes.ts";
import { gatewayRoutes } from "./modules/gateway/gateway.routes.ts";
import type { GatewayDeps } from "./modules/gateway/gateway-call.ts";
import { onlineEvalJudgeFor } from "./modules/gateway/online-eval-judge.ts";
import { openAiRoutes } from "./modules/gateway/openai.routes.ts";
import { answerBadUrl } from "./modules/gateway/openai-unknown-routes.ts";
import { sweepExpiredResponses } from "./modules/gateway/response-store.ts";
import { keysRoutes } from "./modules/keys/keys.routes.ts";
import { mcpRoutes, protectedResourceRoutes } from "./modules/mcp/mcp.routes.ts";
import { modelKeysRoutes } from "./modules/models/model-keys.routes.ts";
import { auditOrganizationWrites } from "./modules/organizations/audit.ts";
import { invitationsRoutes } from "./modules/organizations/invitations.routes.ts";
import { organizationsRoutes } from "./modules/organizations/organizations.routes.ts";
import { organizationUsageRoutes } from "./modules/organizations/usage.routes.ts";
import { downloadRoutes } from "./modules/packaging/download.routes.ts";
import { payoutsRoutes } from "./modules/payouts/payouts.routes.ts";
import { retryPayouts, runPayoutSchedule } from "./modules/payouts/payouts.service.ts";
import { promptsRoutes } from "./modules/prompts/prompts.routes.ts";
import { evalFromCallRoutes } from "./modules/releases/eval-from-call.routes.ts";
import { evalsRoutes } from "./modules/releases/evals.routes.ts";
import { EXPERIMENT_RULES_INTERVAL_MS, runExperimentRules } from "./modules/releases/experiment-rules.ts";
import { experimentsRoutes } from "./modules/releases/experiments.routes.ts";
import { labelsRoutes } from "./modules/releases/labels.routes.ts";
import { onlineEvalsRoutes } from "./modules/releases/online-evals.routes.ts";
import {
  ONLINE_EVALS_INTERVAL_MS,
  onlineEvalScoreOf,
  runOnlineEvals,
} from "./modules/releases/online-evals.ts";
import { rolloutsRoutes } from "./modules/releases/rollouts.routes.ts";
import { ROLLOUT_STEPPER_INTERVAL_MS, runRolloutSteps } from "./modules/releases/rollouts.service.ts";
import { versionsRoutes } from "./modules/releases/versions.routes.ts";
import { runtimeConfigRoutes, systemRoutes } from "./modules/system/system.routes.ts";
import { workflowsRoutes } from "./modules/workflows/workflows.routes.ts";
import { seedWorkflowProviders } from "./modules/workflows/workflows.service.ts";
import { pagesRoutes } from "./pages/pages.routes.ts";
import { buildServices, type Services } from "./services.ts";
import { type WarmUpReport, warmUp } from "./warm-up.ts";
import { registerWeb, webDist } from "./web.ts";

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildAppOptions {
  config: Config;
  /** An already-open database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
  logger?: FastifyServerOptions["logger"];
  /** Where the default logger writes instead of stdout (tests read it to prove nothing secret is logged). */
  logStream?: { write(line: string): void };
  /** Serve the built SPA from apps/web/dist when it exists (default true). */
  serveWeb?: boolean;
}

export interface Server {
  app: FastifyInstance;
  /** Warms connections, statements and the paid path before the server listens (warm-up.ts). */
  warmUp: () => Promise<WarmUpReport>;
}

/** The whole server (main.ts also takes its warm-up: buildServer). */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  return (await buildServer(options)).app;
}

/**
 * The whole server: its services and background jobs, built here at start-up, then every module,
 * listed in the order requests meet them.
 */
export async function buildServer(options: BuildAppOptions): Promise<Server> {
  const { config } = options;
  const database =
    options.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pgdata") }));
  const { db } = database;
  const app = createFastify(options);
  installRequestLog(app, { logAssets: config.isProduction });
  if (config.serverTiming) installStageTimings(app);
  installErrorHandler(app);
  // Error answers say whether a retry can help (x-should-retry, read by the OpenAI SDKs).
  installShouldRetry(app);
  const securityHeaders = installSecurityHeaders(app, config);
  // MCP and OAuth routes a browser-based MCP client calls: any origin, no cookies (lib/cors.ts).
  installBearerCors(app);
  installJsonBodyParser(app);
  limitPublicBodies(app);
  installNulGuard(app);
  const registry = installMetrics(app);

  const services = await buildServices(config, db, app.log, registry);
  // Every paid call's payment: its leases, its recorder and the payers' account ids (billing/call-payment).
  const payments = createCallPayments(db, app.log);
  await seedWorkflowProviders(db);
  const jobs = startJobs(backgroundJobs(config, db, services, app.log, payments), { log: app.log, registry });
  // Fastify closes plugins before this hook, registered first. Then, in this order: no job starts
  // again and the running ones finish; what the paid calls' leases did not spend goes back to the
  // wallets (billing/call-payment/leases.ts); the services let go of Redis and SMTP; the database closes last.
  app.addHook("onClose", async () => {
    await jobs.stop();
    await payments.close();
    await services.close();
    if (!options.database) await database.close();
  });

  await registerApiDocs(app, config, discoveryRails(config));
  // The API reference (/api/docs) and the server-rendered pages' shared files.
  await app.register(pagesRoutes);
  const { embedded } = services.identity;
  if (embedded)
    await app.register(identityRoutes, {
      db,
      provider: embedded.provider,
      config,
      publicUrl: config.publicUrl,
      links: embedded.links,
      onEmailVerified: (accountId: string) => services.identity.emailVerification.accountVerified(accountId),
      onAccountRecovered: (accountId: string) =>
        services.identity.emailVerification.accountRecovered(accountId),
      sessions: services.sessions,
      registrationLimiter: embedded.registrationLimiter,
    });
  await app.register(fastifyMultipart, { limits: { fileSize: config.maxUploadBytes, files: 1, fields: 10 } });
  await app.register(systemRoutes, { db, registry });
  auditOrganizationWrites(app, db);
  const gatewayDeps: GatewayDeps = {
    db,
    guards: services.guards,
    llm: services.llm,
    rateLimiter: services.rateLimiter,
    admission: services.admission,
    openStreams: services.openStreams,
    secrets: services.secrets,
    safeFetch: services.safeFetch,
    feePercent: config.platformFeePercent,
    publicUrl: config.publicUrl,
    payments,
    agentPayments: services.agentPayments,
    receipts: services.receipts,
  };
  // The product API, under /api and again under the versioned root /api/v1 (hidden from the docs).
  const api = (scope: FastifyInstance) =>
    productApi(scope, { config, services, gatewayDeps, allowCors: securityHeaders.allowCors });
  await app.register(api, { prefix: "/api" });
  await app.register(
    async (v1) => {
      v1.addHook("onRoute", (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      await api(v1);
    },
    { prefix: "/api/v1" },
  );
  // OpenAI-compatible gateway: the official SDK's baseURL is /api/v1.
  await app.register(async (gateway) => {
    gateway.addHook("onRoute", securityHeaders.allowCors);
    await gateway.register(openAiRoutes, { prefix: "/api/v1", ...gatewayDeps });
  });
  // OAuth metadata of the MCP endpoints (modules/mcp), for MCP clients that sign in.
  await app.register(protectedResourceRoutes, {
    publicUrl: config.publicUrl,
    authorizationServer: config.oidc.issuer,
  });
  // Discovery for agents: the paid apps, the x402 manifest and the receipts' keys (decision 073).
  await app.register(agentDiscoveryRoutes, {
    db,
    publicUrl: config.publicUrl,
    rails: discoveryRails(config),
    receipts: services.receipts,
  });
  // The embed loader and widget page, framed by creators' allowed sites (their own CSP).
  await app.register(widgetRoutes, { db, tokens: services.embedTokens, publicUrl: config.publicUrl });
  if (options.serveWeb !== false && existsSync(path.join(webDist, "index.html"))) {
    await registerWeb(app, config);
  }
  return {
    app,
    warmUp: () => warmUp(app, { db, llm: services.llm, secrets: services.secrets, log: app.log, payments }),
  };
}

function createFastify(options: BuildAppOptions) {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.headers['payment-signature']",
        "res.headers['set-cookie']",
      ],
      // Tests read the JSON lines; people running it in development read one-liners.
      ...(options.logStream
        ? { stream: options.logStream }
        : config.isProduction
          ? {}
          : { stream: createReadableLogStream() }),
    },
    // One line per request instead of two (lib/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: false },
    // A URL the router cannot read, in the shape of the path's clients (OpenAI's under /api/v1).
    frameworkErrors: answerBadUrl,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest("token", null);
  app.decorateRequest("user", null);
  app.decorateRequest("person", null);
  app.decorateRequest("member", null);
  app.decorateRequest("apiKeyId", null);
  app.decorateRequest("apiKeyScope", null);
  app.decorateRequest("payingAgent", false);
  return app;
}

const TEN_MINUTES_MS = 10 * 60_000;

/** How often each process relays the event log: webhooks and usage export (decision 068). */
const EVENTS_INTERVAL_MS = 2_000;

/** Every background job, each on its own timer (lib/jobs.ts): stopped by the server's close. */
function backgroundJobs(
  config: Config,
  db: Database,
  services: Services,
  log: FastifyBaseLogger,
  payments: CallPayments,
): Job[] {
  const { payoutDeps } = services;
  const money = HOLD_SWEEP_INTERVAL_MS;
  return [
    // Holds left by a crashed process are released once they expire.
    {
      name: "hold-sweep",
      everyMs: money,
      run: async () => {
        const released = await sweepExpiredHolds(db);
        if (released > 0) log.warn({ released }, "released expired holds");
      },
    },
    // x402 payments a call left verified are failed; settlements without an answer are retried.
    ...(services.agentPayments
      ? [
          {
            name: "x402-settlement-sweep",
            everyMs: money,
            run: async () => {
              const ended = await services.agentPayments?.sweep(log);
              if (ended) log.warn({ ended }, "swept x402 payments");
            },
          },
        ]
      : []),
    // Model cost holds of calls a crashed process never recorded go back to the wallet (decision 062).
    {
      name: "model-cost-hold-sweep",
      everyMs: money,
      run: async () => {
        const closed = await sweepExpiredModelCostHolds(db);
        if (closed > 0) log.warn({ closed }, "closed expired model cost holds");
      },
    },
    // Model costs of plan-covered calls (their subscriber prepaid the plan) and of calls from before
    // decision 062 come out of creators' earnings; every other call prepaid its own (decision 062).
    { name: "model-cost-posting", everyMs: money, run: () => postOutstandingModelCosts(db) },
    // Included calls a crashed process took for calls it never recorded go back (decision 025).
    { name: "included-call-sweep", everyMs: money, run: () => sweepExpiredIncludedCalls(db) },
    // Keys' spend reserved for calls that are over: kept if charged, else given back (decision 035).
    { name: "key-reservation-sweep", everyMs: money, run: () => sweepKeyReservations(db) },
    // Members' month spend reserved for calls that are over: kept if charged, else given back (decision 084).
    { name: "member-reservation-sweep", everyMs: money, run: () => sweepMemberReservations(db) },
    // Trial calls and promotional credit taken for calls a crashed process never settled (decision 080).
    { name: "sponsored-call-sweep", everyMs: money, run: () => sweepSponsoredCalls(db) },
    {
      name: "subscription-renewal",
      everyMs: money,
      run: () => renewDueSubscriptions(db, config.platformFeePercent),
    },
    // A plan's payment whose subscribe call never came goes to the payer's wallet (decision 023).
    { name: "plan-payment-credit", everyMs: money, run: () => creditAbandonedPlanPayments(db) },
    // Payouts a crash or a Stripe failure left pending are finished; then the automatic schedule.
    {
      name: "payouts",
      everyMs: money,
      run: async () => {
        await retryPayouts(payoutDeps);
        await runPayoutSchedule(payoutDeps);
      },
    },
    // Running experiments' rules: an arm erring or losing money rolls back, a winner is promoted.
    {
      name: "experiment-rules",
      everyMs: EXPERIMENT_RULES_INTERVAL_MS,
      run: async () => {
        const ended = await runExperimentRules(db, { feePercent: config.platformFeePercent });
        if (ended > 0) log.info({ ended }, "experiments ended by their rules");
      },
    },
    // Sampled live calls judged by their app's assertions, judges paid by the creator (decision 076).
    {
      name: "online-evals",
      everyMs: ONLINE_EVALS_INTERVAL_MS,
      run: async () => {
        const judge = onlineEvalJudgeFor(
          {
            db,
            llm: services.llm,
            secrets: services.secrets,
            feePercent: config.platformFeePercent,
            publicUrl: config.publicUrl,
            payments,
          },
          log,
        );
        await runOnlineEvals(db, judge, { log });
      },
    },
    // Guarded rollouts (decision 077): a step within bounds advances, a breach rolls back by itself.
    // The integrator wires H3's onlineEvalScoreOf here as `onlineScore` (default: no scores).
    {
      name: "rollout-stepper",
      everyMs: ROLLOUT_STEPPER_INTERVAL_MS,
      run: async () => {
        const outcomes = await runRolloutSteps(db, {
          feePercent: config.platformFeePercent,
          onlineScore: onlineEvalScoreOf,
        });
        const acted = outcomes.filter((o) => o !== "waiting" && o !== "gone" && o !== "held");
        if (acted.length > 0) log.info({ outcomes: acted }, "rollouts stepped");
      },
    },
    // The event log's webhooks (fan-out, due deliveries) and usage export sinks (decision 068).
    { name: "events", everyMs: EVENTS_INTERVAL_MS, run: () => services.events.run(log) },
    // An app whose error rate jumped in the last 15-minute window: one event for its creator.
    { name: "app-health", everyMs: 5 * 60_000, run: () => checkAppHealth(backgroundFor(db)) },
    // Finished days' rollup shards are folded into one row each, which keeps 90-day reads small.
    { name: "rollup-compaction", everyMs: TEN_MINUTES_MS, run: () => compactRollups(db) },
    // Embedded visitors' counts of finished days are dropped.
    { name: "embed-visitor-sweep", everyMs: TEN_MINUTES_MS, run: () => sweepEmbedVisitorCalls(db) },
    // Stored Responses past their retention (RESPONSE_RETENTION_DAYS, decision 054) are deleted.
    { name: "stored-response-sweep", everyMs: TEN_MINUTES_MS, run: () => sweepExpiredResponses(db) },
    // Raw invocations: partitions for the days ahead, days past INVOCATION_RETENTION_DAYS dropped
    // (docs/decisions/038); at start too, so a server down for days catches up at once.
    {
      name: "invocation-partitions",
      everyMs: TEN_MINUTES_MS,
      atStart: true,
      run: async () => {
        const done = await maintainInvocationPartitions(db, {
          retentionDays: config.invocationRetentionDays,
        });
        if (done.dropped.length > 0 || done.deferred.length > 0)
          log.info({ ...done }, "invocation partitions maintained");
      },
    },
    // The event log, the same way, with the same retention; a day every sink has not yet passed
    // is kept (decision 068).
    {
      name: "event-partitions",
      everyMs: TEN_MINUTES_MS,
      atStart: true,
      run: async () => {
        const done = await maintainEventPartitions(backgroundFor(db), {
          retentionDays: config.invocationRetentionDays,
        });
        if (done.dropped.length > 0 || done.deferred.length > 0)
          log.info({ ...done }, "event partitions maintained");
      },
    },
    // The embedded issuer's expired rows and old sign-in failures.
    ...(services.identity.embedded
      ? [
          { name: "oidc-payload-sweep", everyMs: TEN_MINUTES_MS, run: () => deleteExpiredOidcPayloads(db) },
          {
            name: "sign-in-failure-sweep",
            everyMs: TEN_MINUTES_MS,
            run: () => deleteStaleSignInFailures(db),
          },
        ]
      : []),
  ];
}

/** The agent rails that are on, as discovery lists them (decision 073): x402 and MPP's charge by Stripe card. */
function discoveryRails(config: Config): DiscoveryRails {
  return {
    x402: config.x402,
    ...(config.mpp ? { mpp: { methods: ["stripe"], currency: "usd" } } : {}),
  };
}

async function registerApiDocs(app: ReturnType<typeof createFastify>, config: Config, rails: DiscoveryRails) {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Promptmint API",
        version: "1.0.0",
        description: "Management and gateway API of Promptmint.",
      },
      servers: [{ url: config.publicUrl }],
      tags: API_TAGS,
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT or pm_ API key" },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // Made once, when the routes are known: the first reader of the docs does not wait for it.
  let publicDocument: Record<string, unknown> | undefined;
  const documentForPeople = () =>
    (publicDocument ??= withPaymentInfo(
      publicApiDocument(app.swagger() as unknown as Record<string, unknown>),
      config.publicUrl,
      rails,
    ));
  app.addHook("onReady", async () => void documentForPeople());
  app.get(
    "/api/openapi.json",
    { schema: { hide: true, querystring: z.object({ internal: z.literal("true").optional() }) } },
    async (request) => (request.query.internal ? app.swagger() : documentForPeople()),
  );
}

/** The product API's modules, each with the services it uses. */
async function productApi(
  scope: FastifyInstance,
  deps: {
    config: Config;
    services: Services;
    gatewayDeps: GatewayDeps;
    allowCors: ReturnType<typeof installSecurityHeaders>["allowCors"];
  },
) {
  const { config, services, gatewayDeps } = deps;
  const { db, guards, llm, secrets, safeFetch } = gatewayDeps;
  const { stripe, payoutDeps } = services;
  const emailVerification = services.identity.emailVerification;
  await scope.register(runtimeConfigRoutes, { config });
  await scope.register(authRoutes, { db, guards, emailVerification, sessions: services.sessions });
  await scope.register(keysRoutes, { db, guards });
  // Organizations, their members and invitations: the signed-in person's own routes (decision 084).
  await scope.register(organizationsRoutes, { db, guards });
  await scope.register(invitationsRoutes, {
    db,
    guards,
    mailer: services.identity.mailer,
    publicUrl: config.publicUrl,
  });
  await scope.register(eventsRoutes, { guards, events: services.events });
  await scope.register(analyticsRoutes, { db, guards });
  await scope.register(applicationsRoutes, {
    db,
    guards,
    secrets,
    dataDir: config.dataDir,
    maxUploadBytes: config.maxUploadBytes,
    stripe,
    feePercent: config.platformFeePercent,
    priceNoticeMs: config.priceIncreaseNoticeMs,
    uploadQuotaBytes: config.uploadQuotaBytes,
  });
  await scope.register(promptsRoutes, {
    db,
    guards,
    llm,
    secrets,
    feePercent: config.platformFeePercent,
    publicUrl: config.publicUrl,
    payments: gatewayDeps.payments,
  });
  await scope.register(experimentsRoutes, { db, guards, feePercent: config.platformFeePercent });
  await scope.register(labelsRoutes, { db, guards, feePercent: config.platformFeePercent });
  await scope.register(versionsRoutes, { db, guards, feePercent: config.platformFeePercent });
  await scope.register(onlineEvalsRoutes, { db, guards });
  await scope.register(rolloutsRoutes, {
    db,
    guards,
    feePercent: config.platformFeePercent,
    onlineScore: onlineEvalScoreOf,
  });
  await scope.register(evalsRoutes, {
    db,
    guards,
    llm,
    secrets,
    feePercent: config.platformFeePercent,
    publicUrl: config.publicUrl,
    payments: gatewayDeps.payments,
    safeFetch,
  });
  await scope.register(evalFromCallRoutes, { db, guards });
  await scope.register(evalApiRoutes, {
    db,
    guards,
    llm,
    secrets,
    feePercent: config.platformFeePercent,
    publicUrl: config.publicUrl,
    payments: gatewayDeps.payments,
  });
  await scope.register(modelKeysRoutes, { db, guards, secrets, feePercent: config.platformFeePercent });
  await scope.register(workflowsRoutes, { db, guards, secrets, safeFetch });
  await scope.register(billingRoutes, { db, guards, config, stripe });
  await scope.register(receiptsRoutes, { db, guards, issuer: config.platform });
  await scope.register(organizationUsageRoutes, { db, guards });
  await scope.register(adminRoutes, { db, guards, config, stripe });
  await scope.register(plansRoutes, {
    db,
    guards,
    feePercent: config.platformFeePercent,
    priceNoticeMs: config.priceIncreaseNoticeMs,
    publicUrl: config.publicUrl,
    stripe,
  });
  await scope.register(sponsoredRoutes, { db, guards });
  await scope.register(payoutsRoutes, { ...payoutDeps, guards });
  await scope.register(downloadRoutes, { db, guards, publicUrl: config.publicUrl });
  // The gateway alone accepts cross-origin calls (the management API does not); the embed
  // routes answer CORS for each app's allowed origins themselves.
  await scope.register(async (gateway) => {
    gateway.addHook("onRoute", deps.allowCors);
    await gateway.register(gatewayRoutes, {
      ...gatewayDeps,
      uploads: {
        dataDir: config.dataDir,
        maxUploadBytes: config.maxUploadBytes,
        uploadQuotaBytes: config.uploadQuotaBytes,
      },
    });
  });
  await scope.register(exploreRoutes, gatewayDeps);
  await scope.register(reviewsRoutes, { db: gatewayDeps.db, guards: gatewayDeps.guards });
  await scope.register(embedRoutes, { ...gatewayDeps, tokens: services.embedTokens });
  await scope.register(mcpRoutes, { ...gatewayDeps, mcp: services.mcp });
  await scope.register(agentsRoutes, gatewayDeps);
}
