import { existsSync } from "node:fs";
import path from "node:path";
import fastifyMultipart from "@fastify/multipart";
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { Gauge } from "prom-client";
import { z } from "zod";
import { type Config, EMBEDDED_ISSUER_KEY } from "./config.ts";
import { type DatabaseHandle, openDatabase } from "./db/client.ts";
import { deleteStaleSignInFailures } from "./identity/accounts.ts";
import type { LinkDeps } from "./identity/email-links.ts";
import { identityRoutes } from "./identity/identity.routes.ts";
import { deleteExpiredOidcPayloads } from "./identity/oidc-adapter.ts";
import { createOidcProvider } from "./identity/oidc-provider.ts";
import { loadSigningKeys, toPublicJwks } from "./identity/signing-keys.ts";
import { createAdmissionGate } from "./lib/admission.ts";
import { API_TAGS, publicApiDocument } from "./lib/api-document.ts";
import { limitPublicBodies } from "./lib/body-limits.ts";
import { installErrorHandler } from "./lib/error-handler.ts";
import { installJsonBodyParser } from "./lib/json-body.ts";
import { createMailer } from "./lib/mailer.ts";
import { installMetrics } from "./lib/metrics.ts";
import { installNulGuard } from "./lib/nul-guard.ts";
import { createReadableLogStream, installRequestLog } from "./lib/request-log.ts";
import { createSafeFetch } from "./lib/safe-fetch.ts";
import { createSecretBox } from "./lib/secrets.ts";
import { installSecurityHeaders } from "./lib/security-headers.ts";
import { adminRoutes } from "./modules/admin/admin.routes.ts";
import { analyticsRoutes } from "./modules/analytics/analytics.routes.ts";
import { maintainInvocationPartitions } from "./modules/analytics/invocation-partitions.ts";
import { compactRollups } from "./modules/analytics/rollups.ts";
import { applicationsRoutes } from "./modules/applications/applications.routes.ts";
import { authRoutes } from "./modules/auth/auth.routes.ts";
import { createAuthGuards } from "./modules/auth/authenticate.ts";
import { createEmailVerification } from "./modules/auth/email-verification.ts";
import { createTokenVerifier } from "./modules/auth/token-verifier.ts";
import { billingRoutes } from "./modules/billing/billing.routes.ts";
import { HOLD_SWEEP_INTERVAL_MS } from "./modules/billing/call-checks.ts";
import {
  createCallPayments,
  sweepExpiredHolds,
  sweepExpiredIncludedCalls,
  sweepKeyReservations,
} from "./modules/billing/call-payment/index.ts";
import { postOutstandingModelCosts } from "./modules/billing/model-costs.ts";
import { creditAbandonedPlanPayments } from "./modules/billing/plan-payments.ts";
import { plansRoutes } from "./modules/billing/plans.routes.ts";
import { createStripeGateway } from "./modules/billing/stripe.ts";
import { renewDueSubscriptions } from "./modules/billing/subscriptions.ts";
import { embedRoutes } from "./modules/embed/embed.routes.ts";
import { createEmbedTokens } from "./modules/embed/embed.service.ts";
import { sweepEmbedVisitorCalls } from "./modules/embed/embed-limits.ts";
import { widgetRoutes } from "./modules/embed/widget.routes.ts";
import { exploreRoutes } from "./modules/explore/explore.routes.ts";
import { gatewayRoutes } from "./modules/gateway/gateway.routes.ts";
import type { GatewayDeps } from "./modules/gateway/gateway-call.ts";
import { createOpenStreams } from "./modules/gateway/open-streams.ts";
import { openAiRoutes } from "./modules/gateway/openai.routes.ts";
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  createWindowLimiter,
} from "./modules/gateway/rate-limit.ts";
import { keysRoutes } from "./modules/keys/keys.routes.ts";
import { mcpRoutes, protectedResourceRoutes } from "./modules/mcp/mcp.routes.ts";
import { createMcpExchanges, MCP_REQUEST_NAMES } from "./modules/mcp/mcp-limits.ts";
import { createLlmClient } from "./modules/models/llm.ts";
import { modelKeysRoutes } from "./modules/models/model-keys.routes.ts";
import { useModelPrices } from "./modules/models/model-prices.ts";
import { downloadRoutes } from "./modules/packaging/download.routes.ts";
import { payoutsRoutes } from "./modules/payouts/payouts.routes.ts";
import {
  applyConnectEvent,
  CONNECT_EVENT_TYPES,
  type PayoutDeps,
  retryPayouts,
  runPayoutSchedule,
} from "./modules/payouts/payouts.service.ts";
import { createStripeConnect } from "./modules/payouts/stripe-connect.ts";
import { promptsRoutes } from "./modules/prompts/prompts.routes.ts";
import { runtimeConfigRoutes, systemRoutes } from "./modules/system/system.routes.ts";
import { workflowsRoutes } from "./modules/workflows/workflows.routes.ts";
import { seedWorkflowProviders } from "./modules/workflows/workflows.service.ts";
import { warmUp, warmUps } from "./warm-up.ts";
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

/** The whole server: every module is listed here, in the order requests meet them. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const database =
    options.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pgdata") }));
  const { db } = database;

  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: ["req.headers.authorization", "req.headers.cookie", "res.headers['set-cookie']"],
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
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest("token", null);
  app.decorateRequest("user", null);
  app.decorateRequest("apiKeyId", null);
  app.decorateRequest("apiKeyScope", null);
  if (!options.database) app.addHook("onClose", () => database.close());

  installRequestLog(app, { logAssets: config.isProduction });
  installErrorHandler(app);
  const securityHeaders = installSecurityHeaders(app, config);
  installJsonBodyParser(app);
  limitPublicBodies(app);
  installNulGuard(app);
  const registry = installMetrics(app);

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
    (publicDocument ??= publicApiDocument(app.swagger() as unknown as Record<string, unknown>));
  app.addHook("onReady", async () => void documentForPeople());
  await app.register(fastifySwaggerUi, {
    routePrefix: "/api/docs",
    transformSpecification: documentForPeople,
    transformSpecificationClone: false,
    // Tags folded: the page opens at once on the list of sections, the gateway first.
    uiConfig: { docExpansion: "none", deepLinking: true, defaultModelsExpandDepth: 0 },
  });
  app.get(
    "/api/openapi.json",
    { schema: { hide: true, querystring: z.object({ internal: z.literal("true").optional() }) } },
    async (request) => (request.query.internal ? app.swagger() : documentForPeople()),
  );

  // Identity: the embedded issuer, or an external one named by OIDC_ISSUER. The embedded one
  // mails links to verify addresses and reset passwords (SMTP_URL, or the development outbox).
  const mailer = config.oidc.embedded ? createMailer(config.mail) : undefined;
  const linkDeps: LinkDeps | undefined = mailer && { db, mailer, publicUrl: config.publicUrl };
  if (mailer) app.addHook("onClose", async () => mailer.close());
  if (mailer?.outboxDir)
    app.log.info(
      { outbox: mailer.outboxDir },
      `no SMTP_URL: mail goes to ${mailer.outboxDir}, listed at ${config.publicUrl}/oidc/dev/outbox`,
    );
  const emailVerification = createEmailVerification({ db, adminEmails: config.adminEmails, links: linkDeps });
  let verifyToken: ReturnType<typeof createTokenVerifier>;
  const secrets = createSecretBox(config.secretKey);
  if (config.oidc.embedded && config.oidc.issuer && linkDeps) {
    const keys = await loadSigningKeys(db, secrets);
    const provider = await createOidcProvider(config, db, keys);
    // Expired issuer rows and old sign-in failures are swept every 10 minutes.
    const sweeper = setInterval(() => {
      deleteExpiredOidcPayloads(db).catch((err) => app.log.warn({ err }, "oidc sweep failed"));
      deleteStaleSignInFailures(db).catch((err) => app.log.warn({ err }, "sign-in failure sweep failed"));
    }, 10 * 60_000);
    sweeper.unref();
    app.addHook("onClose", async () => clearInterval(sweeper));
    // Dynamic client registrations per address, shared by every process when REDIS_URL is set.
    const registrationLimiter = createWindowLimiter({
      name: "oidc-reg",
      limit: config.oidc.registrationsPerIp,
      windowMs: 10 * 60_000,
      what: "client registrations from one address",
      ...(config.redisUrl
        ? { redis: { url: config.redisUrl, keyPrefix: config.redisKeyPrefix, log: app.log } }
        : {}),
    });
    app.addHook("onClose", () => registrationLimiter.close());
    await app.register(identityRoutes, {
      provider,
      db,
      publicUrl: config.publicUrl,
      links: linkDeps,
      onEmailVerified: (accountId: string) => emailVerification.accountVerified(accountId),
      registrationLimiter,
    });
    verifyToken = createTokenVerifier({
      issuer: config.oidc.issuer,
      audience: config.oidc.audience,
      localJwks: toPublicJwks(keys),
      issuerKey: EMBEDDED_ISSUER_KEY,
    });
  } else {
    verifyToken = createTokenVerifier({ issuer: config.oidc.issuer ?? "", audience: config.oidc.audience });
  }
  const guards = createAuthGuards({
    verifyToken,
    db,
    adminEmails: config.adminEmails,
    emailVerification,
  });
  useModelPrices(config.modelPrices);
  const llm = createLlmClient(config);
  const limits = {
    perCallerPerMinute: config.gatewayRateLimitPerMinute,
    perIpPerMinute: config.gatewayRateLimitPerIpPerMinute,
  };
  const rateLimiter = config.redisUrl
    ? createRedisRateLimiter(limits, { url: config.redisUrl, keyPrefix: config.redisKeyPrefix, log: app.log })
    : createMemoryRateLimiter(limits);
  app.addHook("onClose", () => rateLimiter.close());
  const mcpRequestLimits = {
    perCallerPerMinute: config.mcpLimits.requestsPerMinute,
    perIpPerMinute: config.mcpLimits.requestsPerMinutePerIp,
    names: MCP_REQUEST_NAMES,
  };
  const mcpRequestLimiter = config.redisUrl
    ? createRedisRateLimiter(mcpRequestLimits, {
        url: config.redisUrl,
        keyPrefix: `${config.redisKeyPrefix}mcp:`,
        log: app.log,
      })
    : createMemoryRateLimiter(mcpRequestLimits);
  app.addHook("onClose", () => mcpRequestLimiter.close());
  const mcpExchanges = createMcpExchanges(config.mcpLimits);
  registry.registerMetric(
    new Gauge({
      name: "mcp_open_servers",
      help: "MCP servers alive now: one per MCP request being answered (stateless transport)",
      registers: [],
      collect() {
        this.set(mcpExchanges.load.open);
      },
    }),
  );
  const payoutDeps: PayoutDeps = { db, config, connect: createStripeConnect(config), log: app.log };
  const stripe = createStripeGateway(config, {
    types: CONNECT_EVENT_TYPES,
    apply: (tx, event) => applyConnectEvent(payoutDeps, tx, event),
  });
  const safeFetch = createSafeFetch({ allowPrivate: config.allowPrivateUpstreams, timeoutMs: 30_000 });
  const embedTokens = createEmbedTokens(config.secretKey);
  await seedWorkflowProviders(db);
  // Holds left by a crashed process are released once they expire.
  const holdSweeper = setInterval(() => {
    sweepExpiredHolds(db)
      .then((released) => released > 0 && app.log.warn({ released }, "released expired holds"))
      .catch((err) => app.log.warn({ err }, "hold sweep failed"));
    // Model costs that no price paid (plan-covered and owner calls) come out of creators' earnings.
    postOutstandingModelCosts(db).catch((err) => app.log.warn({ err }, "model cost sweep failed"));
    // Included calls a crashed process took for calls it never recorded go back (decision 025).
    sweepExpiredIncludedCalls(db).catch((err) => app.log.warn({ err }, "included call sweep failed"));
    // Keys' spend reserved for calls that are over: kept if charged, else given back (decision 035).
    sweepKeyReservations(db).catch((err) => app.log.warn({ err }, "key reservation sweep failed"));
    renewDueSubscriptions(db, config.platformFeePercent).catch((err) =>
      app.log.warn({ err }, "subscription renewal failed"),
    );
    // A plan's payment whose subscribe call never came goes to the payer's wallet (decision 023).
    creditAbandonedPlanPayments(db).catch((err) => app.log.warn({ err }, "plan payment credit failed"));
    // Payouts a crash or a Stripe failure left pending are finished; then the automatic schedule.
    retryPayouts(payoutDeps)
      .then(() => runPayoutSchedule(payoutDeps))
      .catch((err) => app.log.warn({ err }, "payout sweep failed"));
  }, HOLD_SWEEP_INTERVAL_MS);
  holdSweeper.unref();
  app.addHook("onClose", async () => clearInterval(holdSweeper));
  // The paid calls' payments (billing/call-payment): built once, passed to every paid route and
  // the warm-up; on close, what their leases did not spend goes back to the wallets.
  const payments = createCallPayments(db, app.log);
  app.addHook("onClose", () => payments.close());
  // Raw invocations: partitions for the days ahead, days past INVOCATION_RETENTION_DAYS dropped
  // (docs/decisions/038); at start too, so a server down for days catches up at once.
  const maintainPartitions = () =>
    maintainInvocationPartitions(db, { retentionDays: config.invocationRetentionDays })
      .then(
        (done) =>
          (done.dropped.length > 0 || done.deferred.length > 0) &&
          app.log.info({ ...done }, "invocation partitions maintained"),
      )
      .catch((err) => app.log.warn({ err }, "invocation partition maintenance failed"));
  let maintaining = maintainPartitions();
  app.addHook("onClose", async () => {
    await maintaining;
  });
  // Finished days' rollup shards are folded into one row each, which keeps 90-day reads small;
  // embedded visitors' counts of finished days are dropped.
  const rollupCompactor = setInterval(() => {
    compactRollups(db).catch((err) => app.log.warn({ err }, "rollup compaction failed"));
    sweepEmbedVisitorCalls(db).catch((err) => app.log.warn({ err }, "embed visitor sweep failed"));
    maintaining = maintaining.then(maintainPartitions);
  }, 10 * 60_000);
  rollupCompactor.unref();
  app.addHook("onClose", async () => clearInterval(rollupCompactor));
  await app.register(fastifyMultipart, { limits: { fileSize: config.maxUploadBytes, files: 1, fields: 10 } });

  await app.register(systemRoutes, { db, registry });
  const gatewayDeps: GatewayDeps = {
    db,
    guards,
    llm,
    rateLimiter,
    admission: createAdmissionGate(config.gatewayAdmissionLimit),
    openStreams: createOpenStreams(config.maxOpenStreams),
    secrets,
    safeFetch,
    feePercent: config.platformFeePercent,
    publicUrl: config.publicUrl,
    payments,
  };

  // The product API, under /api and again under the versioned root /api/v1.
  const api = async (scope: FastifyInstance) => {
    await scope.register(runtimeConfigRoutes, { config });
    await scope.register(authRoutes, { db, guards, emailVerification });
    await scope.register(keysRoutes, { db, guards });
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
      payments,
    });
    await scope.register(modelKeysRoutes, { db, guards, secrets, feePercent: config.platformFeePercent });
    await scope.register(workflowsRoutes, { db, guards, secrets, safeFetch });
    await scope.register(billingRoutes, { db, guards, config, stripe });
    await scope.register(adminRoutes, { db, guards, config, stripe });
    await scope.register(plansRoutes, {
      db,
      guards,
      feePercent: config.platformFeePercent,
      priceNoticeMs: config.priceIncreaseNoticeMs,
      publicUrl: config.publicUrl,
      stripe,
    });
    await scope.register(payoutsRoutes, { ...payoutDeps, guards });
    await scope.register(downloadRoutes, { db, guards, publicUrl: config.publicUrl });
    // The gateway alone accepts cross-origin calls (the management API does not); the embed
    // routes answer CORS for each app's allowed origins themselves.
    await scope.register(async (gateway) => {
      gateway.addHook("onRoute", securityHeaders.allowCors);
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
    await scope.register(embedRoutes, { ...gatewayDeps, tokens: embedTokens });
    await scope.register(mcpRoutes, {
      ...gatewayDeps,
      mcp: { requestLimiter: mcpRequestLimiter, exchanges: mcpExchanges },
    });
  };
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

  // The embed loader and widget page, framed by creators' allowed sites (their own CSP).
  await app.register(widgetRoutes, { db, tokens: embedTokens });

  if (options.serveWeb !== false && existsSync(path.join(webDist, "index.html"))) {
    await registerWeb(app, config);
  }
  warmUps.set(app, () => warmUp(app, { db, llm, secrets, log: app.log, payments }));
  return app;
}
