import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { addressKey } from "./lib/email-address.ts";
import type { McpLimits } from "./modules/mcp/mcp-limits.ts";
import { BUILT_IN_PRICES, loadModelPricesFile, type PriceTable } from "./modules/models/model-prices.ts";

/** The one place the environment is read. Everything else receives a typed `Config`. */

const bool = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v && v.trim() !== "" ? v.trim() : undefined));
const optionalUrl = optionalString.pipe(z.url({ message: "must be a URL" }).optional());

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  PUBLIC_URL: optionalUrl,
  DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),
  ),
  SECRET_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  OIDC_ISSUER: optionalUrl,
  OIDC_CLIENT_ID: optionalString,
  OIDC_AUDIENCE: optionalString,
  /** Lifetime of the embedded issuer's access tokens; the SPA renews them with its refresh token. */
  OIDC_ACCESS_TOKEN_TTL_SECONDS: z.coerce
    .number({ error: "must be a whole number of seconds" })
    .int("must be a whole number of seconds")
    .min(5, "must be at least 5 seconds")
    .max(86_400, "must be at most 86400 seconds (one day)")
    .default(300),
  /** Dynamic client registrations (POST /oidc/reg) one address may make per 10 minutes. */
  OIDC_REGISTRATIONS_PER_IP: z.coerce
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(100_000, "must be at most 100000")
    .default(10),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalUrl,
  ANTHROPIC_API_KEY: optionalString,
  GOOGLE_GENERATIVE_AI_API_KEY: optionalString,
  MISTRAL_API_KEY: optionalString,
  STRIPE_SECRET_KEY: optionalString,
  STRIPE_PUBLISHABLE_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  /** Stripe's API root; only for stripe-mock or tests (default https://api.stripe.com). */
  STRIPE_API_URL: optionalUrl,
  /** JSON file of dated model prices added to the built-in table (modules/models/model-prices.ts). */
  MODEL_PRICES_FILE: optionalString,
  /** A second signing secret, for the Connect webhook endpoint (events of connected accounts). */
  STRIPE_CONNECT_WEBHOOK_SECRET: optionalString,
  /** Usage export (decision 068): CloudEvents batches POSTed here (OpenMeter's /api/v1/events). */
  USAGE_EXPORT_CLOUDEVENTS_URL: optionalUrl,
  USAGE_EXPORT_CLOUDEVENTS_TOKEN: optionalString,
  /** The CloudEvents `source` (default: PUBLIC_URL). */
  USAGE_EXPORT_CLOUDEVENTS_SOURCE: optionalString,
  /** Usage export to Stripe Billing: the meter's event name. */
  USAGE_EXPORT_STRIPE_METER: optionalString,
  /** The key meter events are sent with (default STRIPE_SECRET_KEY: an operator may bill from another account). */
  USAGE_EXPORT_STRIPE_KEY: optionalString,
  /** Stripe's API root for meter events (default STRIPE_API_URL, else https://api.stripe.com). */
  USAGE_EXPORT_STRIPE_API_URL: optionalUrl,
  PLATFORM_FEE_PERCENT: z.coerce.number().min(0).max(100).default(10),
  /** Who issues receipts (docs/decisions/069): the operator's legal name and postal address. */
  PLATFORM_LEGAL_NAME: z.string().trim().min(1, "must not be empty").max(200).default("Promptmint"),
  /** Lines separated by commas or newlines; empty: no address on receipts. */
  PLATFORM_ADDRESS: z.string().max(500).default(""),
  /** Days a creator's earnings wait before they can be paid out (refunds and disputes come first). */
  PAYOUT_HOLD_DAYS: z.coerce
    .number({ error: "must be a number of days" })
    .min(0, "must be 0 days or more")
    .max(365, "must be at most 365 days")
    .default(7),
  /**
   * Days of raw invocations kept (docs/decisions/038): older days' partitions are dropped, their
   * rollups kept forever. Unset or empty: 90. 0: keep every day (nothing is dropped).
   */
  INVOCATION_RETENTION_DAYS: z
    .preprocess(
      (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
      z.coerce
        .number({ error: "must be a whole number of days" })
        .int("must be a whole number of days")
        .min(0, "must be 0 (keep every day) or more days")
        .max(36_500, "must be at most 36500 days")
        .optional(),
    )
    .transform((v) => v ?? 90),
  /** The smallest payout, in cents. */
  PAYOUT_MINIMUM_CENTS: z.coerce
    .number({ error: "must be a whole number of cents" })
    .int("must be a whole number of cents")
    .min(100, "must be at least 100 cents")
    .max(10_000_000, "must be at most 10000000 cents")
    .default(1000),
  /** Automatic payouts of everything available above the minimum: weekly, daily, or manual (none). */
  PAYOUT_SCHEDULE: z
    .enum(["weekly", "daily", "manual"], { error: "must be weekly, daily or manual" })
    .default("weekly"),
  /** Days between announcing a price increase and charging it; fractions allowed (0.5 = 12 hours). */
  PRICE_INCREASE_NOTICE_DAYS: z.coerce
    .number({ error: "must be a number of days" })
    .positive("must be more than 0 days (a consumer must see an increase before paying it)")
    .max(365, "must be at most 365 days")
    .default(7),
  /**
   * Comma-separated emails granted the operator role when they sign in with that address
   * verified (the bootstrap; `npm run admin -- grant EMAIL` grants more; docs/decisions/041).
   */
  ADMIN_EMAILS: z.string().default(""),
  /** Where the embedded issuer sends mail: smtp://user:pass@host:587 or smtps://…:465. */
  SMTP_URL: optionalString.pipe(
    z
      .string()
      .regex(/^smtps?:\/\/[^\s]+$/, "must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)")
      .optional(),
  ),
  /** The From of that mail: an address, or "Name <address>". */
  MAIL_FROM: optionalString.pipe(
    z
      .string()
      .regex(
        /^([^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/,
        'must be an address or "Name <address>"',
      )
      .optional(),
  ),
  ALLOW_PRIVATE_UPSTREAMS: bool,
  /** Per-stage timings of every request in a `Server-Timing` header (lib/stage-timings.ts): benchmarks only. */
  SERVER_TIMING: bool,
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// URL")
      .optional(),
  ),
  REDIS_KEY_PREFIX: z.string().default("promptmint:"),
  /** Which peers may set X-Forwarded-For/-Proto: true, false, or addresses/CIDRs/proxy-addr names. */
  TRUST_PROXY: z.string().default("loopback,linklocal,uniquelocal"),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** x402 pay-per-call (docs/decisions/052): on when both the receiving address and the facilitator are set. */
  X402_PAY_TO: optionalString.pipe(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, "must be an EVM address (0x and 40 hex digits)")
      .optional(),
  ),
  X402_FACILITATOR_URL: optionalUrl,
  /**
   * A JSON-RPC endpoint of the x402 network's chain (docs/decisions/064): the only way to confirm
   * a settlement the facilitator left pending, errored after broadcasting or never answered, and
   * to list what reached the receiving address for reconcile. Without it such a payment stays
   * pending until the facilitator itself answers a retried settlement with a transaction.
   */
  X402_RPC_URL: optionalUrl,
  /** The CAIP-2 network payments are taken on (default Base Sepolia). */
  X402_NETWORK: z
    .string()
    .regex(/^eip155:[0-9]+$/, "must be a CAIP-2 EVM network such as eip155:8453 (Base) or eip155:84532")
    .default("eip155:84532"),
  /** The token contract paid in: a USD stablecoin with 6 decimals (one unit = one micro-dollar). */
  X402_ASSET: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "must be the token's contract address (0x and 40 hex digits)")
    .default("0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
  /** The token's EIP-712 domain name and version (USDC: "USDC" / "2"; on Base mainnet "USD Coin"). */
  X402_ASSET_NAME: z.string().min(1).default("USDC"),
  X402_ASSET_VERSION: z.string().min(1).default("2"),
  /** How long a signed payment stays valid for one call. */
  X402_MAX_TIMEOUT_SECONDS: z.coerce
    .number({ error: "must be a whole number of seconds" })
    .int("must be a whole number of seconds")
    .min(30, "must be at least 30 seconds")
    .max(3600, "must be at most 3600 seconds")
    .default(300),
  /**
   * MPP (Machine Payments Protocol, Stripe's shared payment tokens; docs/decisions/071): on when
   * both the challenge key and the Stripe key are set. The challenge key signs every 402's
   * challenge (HMAC), so a credential names only a challenge we issued, at its amount.
   */
  MPP_SECRET_KEY: optionalString.pipe(
    z
      .string()
      .refine((key) => Buffer.byteLength(key) >= 32, "must be at least 32 bytes (e.g. openssl rand -hex 32)")
      .optional(),
  ),
  MPP_STRIPE_SECRET_KEY: optionalString.pipe(
    z
      .string()
      .regex(/^(sk|rk)_(test|live)_/, "must be a Stripe secret or restricted key (sk_… or rk_…)")
      .optional(),
  ),
  /** Where MPP's Stripe calls go (tests and stripe-mock only; default Stripe's own API). */
  MPP_STRIPE_API_URL: optionalUrl,
  /** The Stripe business profile that agents' shared payment tokens are granted to (mppx's `networkId`). */
  MPP_STRIPE_NETWORK_ID: z.string().min(1).default("internal"),
  /** The protection space a challenge names (default PUBLIC_URL's host). */
  MPP_REALM: optionalString,
  /** How long a challenge (and the token made for it) may be paid. */
  MPP_CHALLENGE_TTL_SECONDS: z.coerce
    .number({ error: "must be a whole number of seconds" })
    .int("must be a whole number of seconds")
    .min(30, "must be at least 30 seconds")
    .max(3600, "must be at most 3600 seconds")
    .default(300),
  LLM_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(60),
  /**
   * Paid calls per minute per API key (or user). 600: a tool loop is one paid call per step, and a
   * busy one (a step every 200 ms, or two loops on one key at a step every 400 ms) makes 300 to 600
   * a minute (docs/decisions/072). A runaway loop is stopped by GATEWAY_SPEND_PER_MINUTE_CENTS.
   */
  GATEWAY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /**
   * The most one API key (or user) may spend on paid calls in a minute, in cents, counted at each
   * call's price when it is admitted (docs/decisions/072). Default $5 a minute.
   */
  GATEWAY_SPEND_PER_MINUTE_CENTS: z.coerce.number().int().min(1).max(1_000_000_000).default(500),
  /** Default: 10 × GATEWAY_RATE_LIMIT_PER_MINUTE (ten busy keys behind one address). */
  GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).max(100_000_000).optional(),
  /** Paid calls starting at once (before their upstream call); more wait unread (lib/admission.ts). */
  GATEWAY_ADMISSION_LIMIT: z.coerce.number().int().min(1).max(100_000).default(64),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(15 * 1024 * 1024),
  /** Total bytes of uploaded files one user may keep (all their apps together). */
  UPLOAD_QUOTA_BYTES_PER_USER: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 ** 4)
    .default(200 * 1024 * 1024),
  /** Streamed gateway calls one API key (or signed-in user) may have open at once. */
  GATEWAY_MAX_OPEN_STREAMS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Streamed gateway calls one client address may have open at once (all its keys together). */
  GATEWAY_MAX_OPEN_STREAMS_PER_IP: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** MCP requests (every POST, paid or not) per API key or signed-in user per minute. */
  MCP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(1200),
  /** MCP requests per minute from one client address, counted before authentication. */
  MCP_RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).max(100_000_000).default(4800),
  /** MCP requests one API key (or user) may have being answered at once (each holds a server). */
  MCP_MAX_OPEN_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(20),
  /** The same per client address. */
  MCP_MAX_OPEN_PER_IP: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** The same in the whole process. */
  MCP_MAX_OPEN: z.coerce.number().int().min(1).max(1_000_000).default(500),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  env: Env["NODE_ENV"];
  isProduction: boolean;
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  secretKey: string;
  oidc: {
    /** True when the embedded issuer at /oidc is the identity provider. */
    embedded: boolean;
    issuer: string | undefined;
    clientId: string | undefined;
    audience: string;
    /** OIDC_ACCESS_TOKEN_TTL_SECONDS: how long the embedded issuer's access tokens live. */
    accessTokenTtlSeconds: number;
    /** OIDC_REGISTRATIONS_PER_IP: dynamic client registrations per address per 10 minutes. */
    registrationsPerIp: number;
  };
  platformFeePercent: number;
  /** PLATFORM_LEGAL_NAME and PLATFORM_ADDRESS: who issues receipts. */
  platform: { legalName: string; address: string };
  /** Vendors' model prices: the built-in table plus MODEL_PRICES_FILE (docs/decisions/026). */
  modelPrices: PriceTable;
  /** Creator payouts (docs/decisions/027). */
  payouts: {
    holdDays: number;
    minimumCents: number;
    schedule: "weekly" | "daily" | "manual";
  };
  /** How long a price increase is announced before it is charged (docs/decisions/021). */
  priceIncreaseNoticeMs: number;
  /** PAYOUT_HOLD_DAYS in milliseconds. */
  payoutHoldMs: number;
  /** INVOCATION_RETENTION_DAYS: days of raw invocations kept; 0 keeps every day (docs/decisions/038). */
  invocationRetentionDays: number;
  /** ADMIN_EMAILS, lower-cased: the operator bootstrap, for verified addresses only. */
  adminEmails: string[];
  /** The embedded issuer's mail (docs/decisions/041). */
  mail: {
    /** SMTP_URL; required in production. Unset: messages go to the outbox. */
    smtpUrl: string | undefined;
    from: string;
    /** $DATA_DIR/outbox when no SMTP_URL (never in production), served at /oidc/dev/outbox. */
    outboxDir: string | undefined;
  };
  llmTimeoutSeconds: number;
  gatewayRateLimitPerMinute: number;
  /** Cents one API key (or user) may spend on paid calls per minute (docs/decisions/072). */
  gatewaySpendPerMinuteCents: number;
  gatewayRateLimitPerIpPerMinute: number;
  gatewayAdmissionLimit: number;
  /** Fastify's trustProxy: whose X-Forwarded-* headers decide the client's IP and protocol. */
  trustProxy: boolean | string;
  shutdownTimeoutSeconds: number;
  redisKeyPrefix: string;
  maxUploadBytes: number;
  uploadQuotaBytes: number;
  /** Open streamed calls per API key (or user) and per client address (gateway/open-streams.ts). */
  maxOpenStreams: { perKey: number; perIp: number };
  /** MCP requests per minute and MCP servers open at once (modules/mcp/mcp-limits.ts). */
  mcpLimits: McpLimits;
  allowPrivateUpstreams: boolean;
  /** Stage timings in a `Server-Timing` header on every answer (lib/stage-timings.ts). */
  serverTiming: boolean;
  redisUrl: string | undefined;
  logLevel: Env["LOG_LEVEL"];
  providerKeys: {
    openai: string | undefined;
    openaiBaseUrl: string | undefined;
    anthropic: string | undefined;
    google: string | undefined;
    mistral: string | undefined;
  };
  /** x402 pay-per-call (docs/decisions/052); undefined when off (the default). */
  x402: X402Config | undefined;
  /** MPP with Stripe's shared payment tokens (docs/decisions/071); undefined when off (the default). */
  mpp: MppConfig | undefined;
  stripe: {
    secretKey: string | undefined;
    publishableKey: string | undefined;
    webhookSecret: string | undefined;
    connectWebhookSecret: string | undefined;
    apiUrl: string | undefined;
  };
  /** Usage export sinks (decision 068); each undefined when not configured. */
  usageExport: {
    cloudEvents: { url: string; token: string | undefined; source: string } | undefined;
    stripeMeter: { eventName: string; secretKey: string; apiBase: string } | undefined;
  };
}

/** Where x402 payments go and who verifies and settles them (X402_* variables). */
export interface X402Config {
  payTo: `0x${string}`;
  facilitatorUrl: string;
  network: `${string}:${string}`;
  asset: `0x${string}`;
  assetName: string;
  assetVersion: string;
  maxTimeoutSeconds: number;
  /** The chain's JSON-RPC (X402_RPC_URL), to confirm settlements; undefined when not set. */
  rpcUrl?: string;
}

/** MPP's challenge key and the Stripe account that captures its payments (MPP_* variables). */
export interface MppConfig {
  /** Signs challenges (HMAC-SHA256, mppx's `Challenge` id): never shared. */
  secretKey: string;
  stripeSecretKey: string;
  /** Stripe's API root (MPP_STRIPE_API_URL); undefined for Stripe's own. */
  stripeApiUrl?: string;
  /** mppx's `networkId`: the Stripe profile shared payment tokens are granted to. */
  networkId: string;
  realm: string;
  challengeTtlSeconds: number;
}

export class ConfigError extends Error {}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid environment configuration:\n${lines.join("\n")}`);
  }
  const env = parsed.data;
  const isProduction = env.NODE_ENV === "production";
  const publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  const dataDir = path.resolve(env.DATA_DIR);

  if (env.OIDC_ISSUER && !env.OIDC_CLIENT_ID) {
    throw new ConfigError(
      "Invalid environment configuration:\n  OIDC_CLIENT_ID: required when OIDC_ISSUER is set",
    );
  }
  const embedded = !env.OIDC_ISSUER;
  const secretKey = env.SECRET_KEY ?? readOrCreateSecretKey(dataDir, isProduction);
  if (isProduction && embedded && !env.SMTP_URL) {
    throw new ConfigError(
      "Invalid environment configuration:\n  SMTP_URL: required when NODE_ENV=production (the embedded issuer mails verification and password-reset links; e.g. smtp://user:pass@host:587)",
    );
  }
  if (Boolean(env.X402_PAY_TO) !== Boolean(env.X402_FACILITATOR_URL)) {
    throw new ConfigError(
      `Invalid environment configuration:\n  ${env.X402_PAY_TO ? "X402_FACILITATOR_URL" : "X402_PAY_TO"}: required when ${env.X402_PAY_TO ? "X402_PAY_TO" : "X402_FACILITATOR_URL"} is set (x402 needs both a receiving address and a facilitator)`,
    );
  }
  if (Boolean(env.MPP_SECRET_KEY) !== Boolean(env.MPP_STRIPE_SECRET_KEY)) {
    throw new ConfigError(
      `Invalid environment configuration:\n  ${env.MPP_SECRET_KEY ? "MPP_STRIPE_SECRET_KEY" : "MPP_SECRET_KEY"}: required when ${env.MPP_SECRET_KEY ? "MPP_SECRET_KEY" : "MPP_STRIPE_SECRET_KEY"} is set (MPP needs both a challenge key and a Stripe key)`,
    );
  }
  const meterKey = env.USAGE_EXPORT_STRIPE_KEY ?? env.STRIPE_SECRET_KEY;
  if (env.USAGE_EXPORT_STRIPE_METER && !meterKey) {
    throw new ConfigError(
      "Invalid environment configuration:\n  USAGE_EXPORT_STRIPE_KEY: required when USAGE_EXPORT_STRIPE_METER is set and STRIPE_SECRET_KEY is not (meter events are sent with it)",
    );
  }
  let modelPrices = BUILT_IN_PRICES;
  if (env.MODEL_PRICES_FILE) {
    try {
      modelPrices = loadModelPricesFile(env.MODEL_PRICES_FILE);
    } catch (error) {
      throw new ConfigError(
        `Invalid environment configuration:\n  MODEL_PRICES_FILE: ${(error as Error).message}`,
      );
    }
  }

  return {
    env: env.NODE_ENV,
    isProduction,
    port: env.PORT,
    host: env.HOST,
    publicUrl,
    dataDir,
    databaseUrl: env.DATABASE_URL,
    secretKey,
    oidc: {
      embedded,
      issuer: embedded ? `${publicUrl}/oidc` : env.OIDC_ISSUER,
      clientId: embedded ? EMBEDDED_SPA_CLIENT_ID : env.OIDC_CLIENT_ID,
      audience: env.OIDC_AUDIENCE ?? `${publicUrl}/api`,
      accessTokenTtlSeconds: env.OIDC_ACCESS_TOKEN_TTL_SECONDS,
      registrationsPerIp: env.OIDC_REGISTRATIONS_PER_IP,
    },
    platformFeePercent: env.PLATFORM_FEE_PERCENT,
    platform: { legalName: env.PLATFORM_LEGAL_NAME, address: env.PLATFORM_ADDRESS },
    modelPrices,
    payouts: {
      holdDays: env.PAYOUT_HOLD_DAYS,
      minimumCents: env.PAYOUT_MINIMUM_CENTS,
      schedule: env.PAYOUT_SCHEDULE,
    },
    priceIncreaseNoticeMs: Math.round(env.PRICE_INCREASE_NOTICE_DAYS * 86_400_000),
    payoutHoldMs: Math.round(env.PAYOUT_HOLD_DAYS * 86_400_000),
    invocationRetentionDays: env.INVOCATION_RETENTION_DAYS,
    adminEmails: env.ADMIN_EMAILS.split(",")
      .map(addressKey)
      .filter((email) => email.includes("@")),
    mail: {
      smtpUrl: env.SMTP_URL,
      from: env.MAIL_FROM ?? `Promptmint <no-reply@${new URL(publicUrl).hostname}>`,
      outboxDir: env.SMTP_URL || isProduction ? undefined : path.join(dataDir, "outbox"),
    },
    llmTimeoutSeconds: env.LLM_TIMEOUT_SECONDS,
    gatewayRateLimitPerMinute: env.GATEWAY_RATE_LIMIT_PER_MINUTE,
    gatewaySpendPerMinuteCents: env.GATEWAY_SPEND_PER_MINUTE_CENTS,
    gatewayAdmissionLimit: env.GATEWAY_ADMISSION_LIMIT,
    gatewayRateLimitPerIpPerMinute:
      env.GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE ?? 10 * env.GATEWAY_RATE_LIMIT_PER_MINUTE,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    shutdownTimeoutSeconds: env.SHUTDOWN_TIMEOUT_SECONDS,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    maxUploadBytes: env.MAX_UPLOAD_BYTES,
    uploadQuotaBytes: env.UPLOAD_QUOTA_BYTES_PER_USER,
    maxOpenStreams: {
      perKey: env.GATEWAY_MAX_OPEN_STREAMS_PER_KEY,
      perIp: env.GATEWAY_MAX_OPEN_STREAMS_PER_IP,
    },
    mcpLimits: {
      requestsPerMinute: env.MCP_RATE_LIMIT_PER_MINUTE,
      requestsPerMinutePerIp: env.MCP_RATE_LIMIT_PER_IP_PER_MINUTE,
      openPerKey: env.MCP_MAX_OPEN_PER_KEY,
      openPerIp: env.MCP_MAX_OPEN_PER_IP,
      openTotal: env.MCP_MAX_OPEN,
    },
    allowPrivateUpstreams: env.ALLOW_PRIVATE_UPSTREAMS,
    serverTiming: env.SERVER_TIMING,
    redisUrl: env.REDIS_URL,
    logLevel: env.LOG_LEVEL,
    providerKeys: {
      openai: env.OPENAI_API_KEY,
      openaiBaseUrl: env.OPENAI_BASE_URL,
      anthropic: env.ANTHROPIC_API_KEY,
      google: env.GOOGLE_GENERATIVE_AI_API_KEY,
      mistral: env.MISTRAL_API_KEY,
    },
    x402:
      env.X402_PAY_TO && env.X402_FACILITATOR_URL
        ? {
            payTo: env.X402_PAY_TO as `0x${string}`,
            facilitatorUrl: env.X402_FACILITATOR_URL.replace(/\/+$/, ""),
            network: env.X402_NETWORK as `${string}:${string}`,
            asset: env.X402_ASSET as `0x${string}`,
            assetName: env.X402_ASSET_NAME,
            assetVersion: env.X402_ASSET_VERSION,
            maxTimeoutSeconds: env.X402_MAX_TIMEOUT_SECONDS,
            rpcUrl: env.X402_RPC_URL,
          }
        : undefined,
    mpp:
      env.MPP_SECRET_KEY && env.MPP_STRIPE_SECRET_KEY
        ? {
            secretKey: env.MPP_SECRET_KEY,
            stripeSecretKey: env.MPP_STRIPE_SECRET_KEY,
            stripeApiUrl: env.MPP_STRIPE_API_URL?.replace(/\/+$/, ""),
            networkId: env.MPP_STRIPE_NETWORK_ID,
            realm: env.MPP_REALM ?? new URL(publicUrl).host,
            challengeTtlSeconds: env.MPP_CHALLENGE_TTL_SECONDS,
          }
        : undefined,
    stripe: {
      secretKey: env.STRIPE_SECRET_KEY,
      publishableKey: env.STRIPE_PUBLISHABLE_KEY,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET,
      connectWebhookSecret: env.STRIPE_CONNECT_WEBHOOK_SECRET,
      apiUrl: env.STRIPE_API_URL,
    },
    usageExport: {
      cloudEvents: env.USAGE_EXPORT_CLOUDEVENTS_URL
        ? {
            url: env.USAGE_EXPORT_CLOUDEVENTS_URL,
            token: env.USAGE_EXPORT_CLOUDEVENTS_TOKEN,
            source: env.USAGE_EXPORT_CLOUDEVENTS_SOURCE ?? publicUrl,
          }
        : undefined,
      stripeMeter:
        env.USAGE_EXPORT_STRIPE_METER && meterKey
          ? {
              eventName: env.USAGE_EXPORT_STRIPE_METER,
              secretKey: meterKey,
              apiBase: (
                env.USAGE_EXPORT_STRIPE_API_URL ??
                env.STRIPE_API_URL ??
                "https://api.stripe.com"
              ).replace(/\/+$/, ""),
            }
          : undefined,
    },
  };
}

function parseTrustProxy(value: string): boolean | string {
  const trimmed = value.trim();
  if (trimmed === "true") return true;
  if (trimmed === "false" || trimmed === "") return false;
  return trimmed;
}

export const EMBEDDED_SPA_CLIENT_ID = "promptmint-web";
/** How users of the embedded issuer are keyed, whatever PUBLIC_URL the issuer is served at. */
export const EMBEDDED_ISSUER_KEY = "promptmint:embedded";

/** Outside production a missing SECRET_KEY is generated once and kept in DATA_DIR. */
function readOrCreateSecretKey(dataDir: string, isProduction: boolean): string {
  if (isProduction) {
    throw new ConfigError(
      "Invalid environment configuration:\n  SECRET_KEY: required when NODE_ENV=production",
    );
  }
  const file = path.join(dataDir, "secret-key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("base64url");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}
