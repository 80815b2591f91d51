import { z } from "zod";

/**
 * Runtime settings the SPA reads from `GET /api/config` at boot, so one build runs on any host.
 * `oidc.issuer`/`oidc.client_id` are null when identity is not configured.
 */
export const RuntimeConfigSchema = z.object({
  public_url: z.string(),
  oidc: z.object({
    issuer: z.string().nullable(),
    client_id: z.string().nullable(),
    audience: z.string().nullable(),
    scope: z.string(),
    embedded: z.boolean(),
  }),
  sandbox: z.object({ llm: z.boolean(), payments: z.boolean() }),
  /** Stripe's publishable key (public by design) when card payments go through Stripe. */
  stripe_publishable_key: z.string().nullable(),
});
export type RuntimeConfig = z.infer<typeof RuntimeConfigSchema>;
