import Stripe from "stripe";
import type { Config } from "../../config.ts";

/** The Stripe SDK configured from the environment (STRIPE_API_URL points it at a test server); undefined without keys. */
export function stripeClient(config: Config): Stripe | undefined {
  const { secretKey, publishableKey, apiUrl } = config.stripe;
  if (!secretKey || !publishableKey) return undefined;
  const endpoint = apiUrl ? new URL(apiUrl) : undefined;
  return new Stripe(secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    ...(endpoint
      ? {
          host: endpoint.hostname,
          port: endpoint.port || undefined,
          protocol: endpoint.protocol.replace(":", "") as "http" | "https",
        }
      : {}),
  });
}
