import type { FastifyBaseLogger } from "fastify";
import { Gauge, type Registry } from "prom-client";
import { type Config, EMBEDDED_ISSUER_KEY } from "./config.ts";
import type { Database } from "./db/client.ts";
import type { LinkDeps } from "./identity/email-links.ts";
import { createOidcProvider } from "./identity/oidc-provider.ts";
import { loadSigningKeys, toPublicJwks } from "./identity/signing-keys.ts";
import { createAdmissionGate } from "./lib/admission.ts";
import { createMailer, type Mailer } from "./lib/mailer.ts";
import { createSafeFetch } from "./lib/safe-fetch.ts";
import { createSecretBox } from "./lib/secrets.ts";
import { createAuthGuards } from "./modules/auth/authenticate.ts";
import { createEmailVerification } from "./modules/auth/email-verification.ts";
import { createSessionChecks, type SessionChecks } from "./modules/auth/sessions.ts";
import { createTokenVerifier } from "./modules/auth/token-verifier.ts";
import { createAgentPayments } from "./modules/billing/agent-payments/index.ts";
import { createReceiptSigner } from "./modules/billing/call-receipts-signing.ts";
import { createStripeGateway } from "./modules/billing/stripe.ts";
import { createEmbedTokens } from "./modules/embed/embed.service.ts";
import { createEventServices } from "./modules/events/index.ts";
import { createOpenStreams } from "./modules/gateway/open-streams.ts";
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  createWindowLimiter,
  type RateLimits,
} from "./modules/gateway/rate-limit.ts";
import { createMcpExchanges, MCP_REQUEST_NAMES } from "./modules/mcp/mcp-limits.ts";
import { createLlmClient } from "./modules/models/llm.ts";
import { useModelPrices } from "./modules/models/model-prices.ts";
import {
  applyConnectEvent,
  CONNECT_EVENT_TYPES,
  type PayoutDeps,
} from "./modules/payouts/payouts.service.ts";
import { createStripeConnect } from "./modules/payouts/stripe-connect.ts";
import { promptReleaseKind } from "./modules/prompts/release-kind.ts";
import { registerReleaseKind } from "./modules/releases/release-kinds.ts";
import { workflowReleaseKind } from "./modules/workflows/release-kind.ts";

export type Services = Awaited<ReturnType<typeof buildServices>>;

/**
 * Every service the routes and jobs share, built once at start-up and passed down by app.ts.
 * `close` lets go of what they hold outside the database (Redis connections, the SMTP transport);
 * the database is closed after it, by app.ts.
 */
export async function buildServices(
  config: Config,
  db: Database,
  log: FastifyBaseLogger,
  registry: Registry,
) {
  // Each kind of app tells releases what its releases need (docs/decisions/075).
  registerReleaseKind(promptReleaseKind);
  registerReleaseKind(workflowReleaseKind);
  const secrets = createSecretBox(config.secretKey);
  const sessions = createSessionChecks(db);
  const identity = await buildIdentity(config, db, log, secrets, sessions);
  const guards = createAuthGuards({
    verifyToken: identity.verifyToken,
    db,
    adminEmails: config.adminEmails,
    emailVerification: identity.emailVerification,
    sessions,
  });
  useModelPrices(config.modelPrices);
  const llm = createLlmClient(config);

  // Per caller and per address, shared by every process when REDIS_URL is set.
  const limiterFor = (limits: RateLimits, keyPrefix: string) =>
    config.redisUrl
      ? createRedisRateLimiter(limits, { url: config.redisUrl, keyPrefix, log })
      : createMemoryRateLimiter(limits);
  const rateLimiter = limiterFor(
    {
      perCallerPerMinute: config.gatewayRateLimitPerMinute,
      perIpPerMinute: config.gatewayRateLimitPerIpPerMinute,
      spendPerCallerPerMinuteCents: config.gatewaySpendPerMinuteCents,
    },
    config.redisKeyPrefix,
  );
  const mcp = {
    requestLimiter: limiterFor(
      {
        perCallerPerMinute: config.mcpLimits.requestsPerMinute,
        perIpPerMinute: config.mcpLimits.requestsPerMinutePerIp,
        names: MCP_REQUEST_NAMES,
      },
      `${config.redisKeyPrefix}mcp:`,
    ),
    exchanges: createMcpExchanges(config.mcpLimits),
  };
  registry.registerMetric(
    new Gauge({
      name: "mcp_open_servers",
      help: "MCP servers alive now: one per MCP request being answered (stateless transport)",
      registers: [],
      collect() {
        this.set(mcp.exchanges.load.open);
      },
    }),
  );

  const payoutDeps: PayoutDeps = { db, config, connect: createStripeConnect(config), log };
  const stripe = createStripeGateway(config, {
    types: CONNECT_EVENT_TYPES,
    apply: (tx, event) => applyConnectEvent(payoutDeps, tx, event),
  });

  const safeFetch = createSafeFetch({ allowPrivate: config.allowPrivateUpstreams, timeoutMs: 30_000 });
  return {
    secrets,
    sessions,
    identity,
    guards,
    llm,
    rateLimiter,
    mcp,
    admission: createAdmissionGate(config.gatewayAdmissionLimit),
    openStreams: createOpenStreams(config.maxOpenStreams),
    safeFetch,
    /** Webhooks and usage export (modules/events, docs/decisions/068). */
    events: createEventServices(config, { db, secrets, safeFetch, mailer: identity.mailer }),
    embedTokens: createEmbedTokens(config.secretKey),
    stripe,
    payoutDeps,
    /** x402 pay-per-call when X402_* is set (billing/agent-payments, docs/decisions/052). */
    agentPayments: createAgentPayments(db, { x402: config.x402, mpp: config.mpp }),
    /** Signs paid calls' receipts; its keys are published at /.well-known (docs/decisions/073). */
    receipts: createReceiptSigner(db, secrets, { issuer: config.publicUrl }),
    async close() {
      await Promise.all([
        rateLimiter.close(),
        mcp.requestLimiter.close(),
        identity.embedded?.registrationLimiter.close(),
      ]);
      identity.mailer?.close();
    },
  };
}

/**
 * Identity: the embedded issuer, or an external one named by OIDC_ISSUER. The embedded one mails
 * links to verify addresses and reset passwords (SMTP_URL, or the development outbox).
 */
async function buildIdentity(
  config: Config,
  db: Database,
  log: FastifyBaseLogger,
  secrets: ReturnType<typeof createSecretBox>,
  sessions: SessionChecks,
) {
  const mailer: Mailer | undefined = config.oidc.embedded ? createMailer(config.mail) : undefined;
  const links: LinkDeps | undefined = mailer && { db, mailer, publicUrl: config.publicUrl };
  if (mailer?.outboxDir)
    log.info(
      { outbox: mailer.outboxDir },
      `no SMTP_URL: mail goes to ${mailer.outboxDir}, listed at ${config.publicUrl}/oidc/dev/outbox`,
    );
  const emailVerification = createEmailVerification({ db, adminEmails: config.adminEmails, links });
  if (!(config.oidc.embedded && config.oidc.issuer && links)) {
    const verifyToken = createTokenVerifier({
      issuer: config.oidc.issuer ?? "",
      audience: config.oidc.audience,
    });
    return { mailer, emailVerification, verifyToken, embedded: undefined };
  }
  const keys = await loadSigningKeys(db, secrets);
  // Dynamic client registrations per address, shared by every process when REDIS_URL is set; a
  // client ID metadata document fetched for the first time counts as one (decision 051).
  const registrationLimiter = createWindowLimiter({
    name: "oidc-reg",
    limit: config.oidc.registrationsPerIp,
    windowMs: 10 * 60_000,
    what: "client registrations from one address",
    ...(config.redisUrl ? { redis: { url: config.redisUrl, keyPrefix: config.redisKeyPrefix, log } } : {}),
  });
  const provider = await createOidcProvider(config, db, keys, sessions, registrationLimiter);
  const verifyToken = createTokenVerifier({
    issuer: config.oidc.issuer,
    audience: config.oidc.audience,
    localJwks: toPublicJwks(keys),
    issuerKey: EMBEDDED_ISSUER_KEY,
  });
  return { mailer, emailVerification, verifyToken, embedded: { provider, links, registrationLimiter } };
}
