import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

const dataDir = () => mkdtempSync(path.join(os.tmpdir(), "pm-config-"));

describe("loadConfig", () => {
  it("uses the embedded defaults on a fresh machine", () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config.port).toBe(3000);
    expect(config.publicUrl).toBe("http://localhost:3000");
    expect(config.databaseUrl).toBeUndefined();
    expect(config.oidc).toEqual({
      embedded: true,
      issuer: "http://localhost:3000/oidc",
      clientId: "promptmint-web",
      audience: "http://localhost:3000/api",
      accessTokenTtlSeconds: 300,
      registrationsPerIp: 10,
    });
    expect(config.platformFeePercent).toBe(10);
    expect(config.allowPrivateUpstreams).toBe(false);
    // Stage timings tell anyone how long each stage took: a benchmark's switch, off by default.
    expect(config.serverTiming).toBe(false);
    expect(loadConfig({ DATA_DIR: dir, SERVER_TIMING: "true" }).serverTiming).toBe(true);
    // A generated SECRET_KEY is kept in DATA_DIR so restarts reuse it.
    expect(readFileSync(path.join(dir, "secret-key"), "utf8").trim()).toBe(config.secretKey);
    expect(loadConfig({ DATA_DIR: dir }).secretKey).toBe(config.secretKey);
  });

  it("sizes the paid limits for agents' tool loops: 600 calls and $5 a minute per key (decision 072)", () => {
    const defaults = loadConfig({ DATA_DIR: dataDir() });
    expect(defaults.gatewayRateLimitPerMinute).toBe(600);
    expect(defaults.gatewayRateLimitPerIpPerMinute).toBe(6000);
    expect(defaults.gatewaySpendPerMinuteCents).toBe(500);
    expect(defaults.mcpLimits.requestsPerMinute).toBe(1200);
    expect(defaults.mcpLimits.requestsPerMinutePerIp).toBe(4800);
    expect(
      loadConfig({ DATA_DIR: dataDir(), GATEWAY_SPEND_PER_MINUTE_CENTS: "2500" }).gatewaySpendPerMinuteCents,
    ).toBe(2500);
    expect(() => loadConfig({ DATA_DIR: dataDir(), GATEWAY_SPEND_PER_MINUTE_CENTS: "0" })).toThrow();
  });

  it("reads the hardening settings: per-IP limit, trusted proxies, shutdown deadline", () => {
    const defaults = loadConfig({ DATA_DIR: dataDir(), GATEWAY_RATE_LIMIT_PER_MINUTE: "30" });
    expect(defaults.gatewayRateLimitPerIpPerMinute).toBe(300);
    expect(defaults.trustProxy).toBe("loopback,linklocal,uniquelocal");
    expect(defaults.shutdownTimeoutSeconds).toBe(30);
    expect(defaults.redisKeyPrefix).toBe("promptmint:");
    const set = loadConfig({
      DATA_DIR: dataDir(),
      GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE: "45",
      TRUST_PROXY: "false",
      SHUTDOWN_TIMEOUT_SECONDS: "5",
    });
    expect(set.gatewayRateLimitPerIpPerMinute).toBe(45);
    expect(set.trustProxy).toBe(false);
    expect(set.shutdownTimeoutSeconds).toBe(5);
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(() => loadConfig({ DATA_DIR: dataDir(), SHUTDOWN_TIMEOUT_SECONDS: "0" })).toThrow(
      /SHUTDOWN_TIMEOUT_SECONDS/,
    );
  });

  it("turns x402 on only with a receiving address and a facilitator, naming what is missing or bad", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).x402).toBeUndefined();
    const payTo = "0x1111111111111111111111111111111111111111";
    expect(
      loadConfig({ DATA_DIR: dataDir(), X402_PAY_TO: payTo, X402_FACILITATOR_URL: "https://f.example/x402/" })
        .x402,
    ).toEqual({
      payTo,
      facilitatorUrl: "https://f.example/x402",
      network: "eip155:84532",
      asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      assetName: "USDC",
      assetVersion: "2",
      maxTimeoutSeconds: 300,
    });
    expect(() => loadConfig({ DATA_DIR: dataDir(), X402_PAY_TO: payTo })).toThrow(
      /X402_FACILITATOR_URL: required when X402_PAY_TO is set/,
    );
    expect(() => loadConfig({ DATA_DIR: dataDir(), X402_FACILITATOR_URL: "https://f.example" })).toThrow(
      /X402_PAY_TO: required/,
    );
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), X402_PAY_TO: "0x12", X402_FACILITATOR_URL: "https://f.example" }),
    ).toThrow(/X402_PAY_TO: must be an EVM address/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), X402_NETWORK: "base" })).toThrow(
      /X402_NETWORK: must be a CAIP-2 EVM network/,
    );
    // The chain that confirms pending settlements (decision 064): optional, a URL when set.
    const withChain = { DATA_DIR: dataDir(), X402_PAY_TO: payTo, X402_FACILITATOR_URL: "https://f.example" };
    expect(loadConfig({ ...withChain, X402_RPC_URL: "https://rpc.example" }).x402?.rpcUrl).toBe(
      "https://rpc.example",
    );
    expect(() => loadConfig({ ...withChain, X402_RPC_URL: "sepolia" })).toThrow(
      /X402_RPC_URL: must be a URL/,
    );
  });

  it("turns MPP on with both its challenge key and a Stripe key, and names the one missing", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).mpp).toBeUndefined();
    const key = "k".repeat(32);
    expect(
      loadConfig({
        DATA_DIR: dataDir(),
        PUBLIC_URL: "https://api.promptmint.example",
        MPP_SECRET_KEY: key,
        MPP_STRIPE_SECRET_KEY: "sk_test_123",
        MPP_STRIPE_API_URL: "http://127.0.0.1:12111/",
      }).mpp,
    ).toEqual({
      secretKey: key,
      stripeSecretKey: "sk_test_123",
      stripeApiUrl: "http://127.0.0.1:12111",
      networkId: "internal",
      realm: "api.promptmint.example",
      challengeTtlSeconds: 300,
    });
    expect(() => loadConfig({ DATA_DIR: dataDir(), MPP_SECRET_KEY: key })).toThrow(
      /MPP_STRIPE_SECRET_KEY: required when MPP_SECRET_KEY is set/,
    );
    expect(() => loadConfig({ DATA_DIR: dataDir(), MPP_STRIPE_SECRET_KEY: "sk_test_123" })).toThrow(
      /MPP_SECRET_KEY: required when MPP_STRIPE_SECRET_KEY is set/,
    );
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), MPP_SECRET_KEY: "short", MPP_STRIPE_SECRET_KEY: "sk_test_123" }),
    ).toThrow(/MPP_SECRET_KEY: must be at least 32 bytes/);
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), MPP_SECRET_KEY: key, MPP_STRIPE_SECRET_KEY: "pk_test_123" }),
    ).toThrow(/MPP_STRIPE_SECRET_KEY: must be a Stripe secret or restricted key/);
  });

  it("names every bad variable", () => {
    const attempt = () =>
      loadConfig({
        DATA_DIR: dataDir(),
        PORT: "eighty",
        DATABASE_URL: "mysql://x",
        PLATFORM_FEE_PERCENT: "150",
      });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/PORT/);
    expect(attempt).toThrow(/DATABASE_URL: must be a postgres/);
    expect(attempt).toThrow(/PLATFORM_FEE_PERCENT/);
  });

  it("reads the price increase notice in days, fractions allowed, and refuses none", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).priceIncreaseNoticeMs).toBe(7 * 86_400_000);
    expect(loadConfig({ DATA_DIR: dataDir(), PRICE_INCREASE_NOTICE_DAYS: "0.5" }).priceIncreaseNoticeMs).toBe(
      43_200_000,
    );
    for (const bad of ["0", "-1", "soon", "400"])
      expect(() => loadConfig({ DATA_DIR: dataDir(), PRICE_INCREASE_NOTICE_DAYS: bad })).toThrow(
        /PRICE_INCREASE_NOTICE_DAYS/,
      );
  });

  it("reads the invocation retention in whole days: 90 unset or empty, 0 keeps every day", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).invocationRetentionDays).toBe(90);
    expect(loadConfig({ DATA_DIR: dataDir(), INVOCATION_RETENTION_DAYS: "" }).invocationRetentionDays).toBe(
      90,
    );
    expect(loadConfig({ DATA_DIR: dataDir(), INVOCATION_RETENTION_DAYS: "0" }).invocationRetentionDays).toBe(
      0,
    );
    expect(
      loadConfig({ DATA_DIR: dataDir(), INVOCATION_RETENTION_DAYS: "400" }).invocationRetentionDays,
    ).toBe(400);
    for (const bad of ["-1", "1.5", "forever", "40000"])
      expect(() => loadConfig({ DATA_DIR: dataDir(), INVOCATION_RETENTION_DAYS: bad })).toThrow(
        /INVOCATION_RETENTION_DAYS: must be/,
      );
  });

  it("requires OIDC_CLIENT_ID with an external OIDC_ISSUER and uses the external issuer", () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), OIDC_ISSUER: "https://id.example.com" })).toThrow(
      /OIDC_CLIENT_ID/,
    );
    const config = loadConfig({
      DATA_DIR: dataDir(),
      OIDC_ISSUER: "https://id.example.com/oidc",
      OIDC_CLIENT_ID: "spa",
      OIDC_AUDIENCE: "https://api.promptmint.example",
    });
    expect(config.oidc).toEqual({
      embedded: false,
      issuer: "https://id.example.com/oidc",
      clientId: "spa",
      audience: "https://api.promptmint.example",
      accessTokenTtlSeconds: 300,
      registrationsPerIp: 10,
    });
  });

  it("reads the embedded issuer's access-token lifetime and registration limit, naming a bad value", () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      OIDC_ACCESS_TOKEN_TTL_SECONDS: "20",
      OIDC_REGISTRATIONS_PER_IP: "50",
    });
    expect(config.oidc).toMatchObject({ accessTokenTtlSeconds: 20, registrationsPerIp: 50 });
    expect(() => loadConfig({ DATA_DIR: dataDir(), OIDC_ACCESS_TOKEN_TTL_SECONDS: "2" })).toThrow(
      /OIDC_ACCESS_TOKEN_TTL_SECONDS: must be at least 5 seconds/,
    );
    expect(() => loadConfig({ DATA_DIR: dataDir(), OIDC_REGISTRATIONS_PER_IP: "many" })).toThrow(
      /OIDC_REGISTRATIONS_PER_IP: must be a whole number/,
    );
  });

  it("refuses to start in production without a SECRET_KEY, and rejects a short one", () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), NODE_ENV: "production" })).toThrow(/SECRET_KEY: required/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), SECRET_KEY: "short" })).toThrow(
      /SECRET_KEY: must be at least 32/,
    );
  });

  it("refuses to start in production without SMTP_URL (the embedded issuer mails links), and names a bad one", () => {
    const production = { DATA_DIR: dataDir(), NODE_ENV: "production", SECRET_KEY: "k".repeat(32) };
    expect(() => loadConfig(production)).toThrow(/SMTP_URL: required when NODE_ENV=production/);
    expect(() => loadConfig({ ...production, SMTP_URL: "http://mail.example.com" })).toThrow(
      /SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/,
    );
    const config = loadConfig({ ...production, SMTP_URL: "smtp://user:pass@mail.example.com:587" });
    expect(config.mail).toEqual({
      smtpUrl: "smtp://user:pass@mail.example.com:587",
      from: "Promptmint <no-reply@localhost>",
      outboxDir: undefined,
    });
    // An external issuer sends its own mail.
    expect(
      loadConfig({ ...production, OIDC_ISSUER: "https://id.example.com", OIDC_CLIENT_ID: "spa" }).mail
        .smtpUrl,
    ).toBeUndefined();
  });

  it("keeps mail in DATA_DIR/outbox outside production when no SMTP_URL is set", () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir, MAIL_FROM: "Ops <ops@promptmint.example>" });
    expect(config.mail).toEqual({
      smtpUrl: undefined,
      from: "Ops <ops@promptmint.example>",
      outboxDir: path.join(path.resolve(dir), "outbox"),
    });
    expect(() => loadConfig({ DATA_DIR: dir, MAIL_FROM: "not an address" })).toThrow(/MAIL_FROM: must be/);
  });

  it("derives the issuer and audience from PUBLIC_URL", () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      PUBLIC_URL: "https://promptmint.example/",
      PORT: "8080",
    });
    expect(config.publicUrl).toBe("https://promptmint.example");
    expect(config.oidc.issuer).toBe("https://promptmint.example/oidc");
  });
});
