import { type RuntimeConfig, RuntimeConfigSchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Registry } from "prom-client";
import { z } from "zod";
import type { Config } from "../../config.ts";
import { type Database, pingDatabase } from "../../db/client.ts";

export const OIDC_SCOPE = "openid profile email offline_access";

export function runtimeConfigFor(config: Config): RuntimeConfig {
  return {
    public_url: config.publicUrl,
    oidc: {
      issuer: config.oidc.issuer ?? null,
      client_id: config.oidc.clientId ?? null,
      audience: config.oidc.audience,
      scope: OIDC_SCOPE,
      embedded: config.oidc.embedded,
    },
    stripe_publishable_key:
      config.stripe.secretKey && config.stripe.publishableKey ? config.stripe.publishableKey : null,
    sandbox: {
      llm: !(
        config.providerKeys.openai ||
        config.providerKeys.anthropic ||
        config.providerKeys.google ||
        config.providerKeys.mistral
      ),
      payments: !(config.stripe.secretKey && config.stripe.publishableKey),
    },
  };
}

/** Health, readiness, Prometheus metrics (root level). */
export const systemRoutes: FastifyPluginAsyncZod<{ db: Database; registry: Registry }> = async (
  app,
  { db, registry },
) => {
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
    try {
      await pingDatabase(db);
      return { status: "ready" };
    } catch {
      return reply
        .status(503)
        .send({ code: "unavailable", message: "Database is not reachable", status: 503 });
    }
  });
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
};

/** `GET /api/config`: the SPA's runtime settings, so one build runs on any host. */
export const runtimeConfigRoutes: FastifyPluginAsyncZod<{ config: Config }> = async (app, { config }) => {
  const body = runtimeConfigFor(config);
  app.get(
    "/config",
    {
      schema: {
        tags: ["system"],
        summary: "Runtime settings for the web app",
        response: { 200: RuntimeConfigSchema },
      },
    },
    async () => body,
  );
  app.get(
    "/health",
    { schema: { hide: true, response: { 200: z.object({ status: z.string() }) } } },
    async () => ({ status: "ok" }),
  );
};
