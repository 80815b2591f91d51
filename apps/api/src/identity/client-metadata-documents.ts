import type { IncomingMessage } from "node:http";
import type { Configuration } from "oidc-provider";
import type { Config } from "../config.ts";
import { AppError } from "../lib/errors.ts";
import { createSafeFetch } from "../lib/safe-fetch.ts";
import type { WindowLimiter } from "../modules/gateway/rate-limit.ts";

/**
 * Client ID Metadata Documents (MCP authorization 2025-11-25, draft-ietf-oauth-client-id-metadata-document):
 * an MCP client may use an https URL as its `client_id`, where the issuer fetches its metadata,
 * instead of registering. oidc-provider implements the protocol (the URL's shape, `client_id`
 * equal to the URL, no shared secrets, https URIs, an LRU cache of 100 documents kept for the
 * document's max-age within `CACHE_SECONDS`); this file decides how the document is fetched:
 * through the same guard as creator-supplied URLs (lib/safe-fetch.ts), which refuses private,
 * loopback and reserved addresses (by literal, by DNS, per connection) unless
 * ALLOW_PRIVATE_UPSTREAMS is on (tests, local development), in `TIMEOUT_MS`, at most
 * `MAX_DOCUMENT_BYTES`, following no redirect. The document's redirect URIs and strings pass the
 * same checks as a registered client's (oidc-provider.ts extraClientMetadata).
 */

/** The draft oidc-provider implements; the feature is experimental there and asks for this ack. */
const DRAFT = "draft-02";
const TIMEOUT_MS = 2500;
/** The draft's suggested bound: a metadata document is a few hundred bytes. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
const CACHE_SECONDS = { min: 60, max: 24 * 60 * 60 };

/**
 * The client's address as Fastify determined it (TRUST_PROXY), put on the raw request before it
 * is handed to the issuer: oidc-provider's own `ctx.ip` trusts any X-Forwarded-For.
 */
export const CLIENT_ADDRESS = Symbol("promptmint.clientAddress");

function clientAddressOf(raw: IncomingMessage): string {
  return (
    (raw as IncomingMessage & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS] ?? raw.socket.remoteAddress ?? ""
  );
}

/** Why a first-time document was not fetched: its address used up its registrations. */
export const TOO_MANY_DOCUMENTS =
  "Too many new clients were introduced from your address (registrations and metadata documents count alike): try again in a few minutes.";

/**
 * The feature's settings. `registrationLimiter` counts a document's first fetch from an address
 * like a dynamic registration (OIDC_REGISTRATIONS_PER_IP): a cached document costs nothing, so
 * known clients are never held up, while no address can make the server fetch URL after URL.
 */
export function clientIdMetadataDocuments(
  config: Config,
  registrationLimiter: WindowLimiter,
): {
  feature: NonNullable<NonNullable<Configuration["features"]>["clientIdMetadataDocument"]>;
  fetch: NonNullable<Configuration["fetch"]>;
  fetchResponseBodyLimits: NonNullable<Configuration["fetchResponseBodyLimits"]>;
} {
  const safeFetch = createSafeFetch({
    allowPrivate: config.allowPrivateUpstreams,
    timeoutMs: TIMEOUT_MS,
    maxResponseBytes: MAX_DOCUMENT_BYTES,
    maxRedirects: 0,
  });
  return {
    feature: {
      enabled: true,
      ack: DRAFT,
      cacheDuration: CACHE_SECONDS,
      async allowFetch(ctx) {
        try {
          await registrationLimiter.hit(clientAddressOf(ctx.req));
          return true;
        } catch (error) {
          if (error instanceof AppError && error.code === "rate_limited") return false;
          throw error;
        }
      },
    },
    // oidc-provider's own fetch (its dispatcher refuses special-use addresses after connecting)
    // is replaced as a whole, so that one rule decides which addresses the server may reach.
    async fetch(url, options) {
      const init = options as { headers?: Headers; signal?: AbortSignal };
      try {
        const response = await safeFetch(String(url), {
          method: "GET",
          headers: { accept: "application/json" },
          signal: init.signal,
        });
        const body = await response.text();
        return new Response(body, { status: response.status, headers: response.headers });
      } catch (error) {
        // oidc-provider answers "client_id metadata document fetch failed" with this as its
        // detail, which the error page shows (oidc-provider.ts renderError).
        throw new Error(`The client's metadata document could not be fetched: ${reasonOf(error)}.`, {
          cause: error,
        });
      }
    },
    fetchResponseBodyLimits: {
      "client_id metadata document": MAX_DOCUMENT_BYTES,
      jwks_uri: 64 * 1024,
      sector_identifier_uri: 64 * 1024,
    },
  };
}

/** Why the guarded fetch failed, in the words of a metadata document rather than a provider's. */
function reasonOf(error: unknown): string {
  if (!(error instanceof AppError)) return "its server could not be reached";
  if (error.code === "bad_request" && error.message.includes("private or reserved"))
    return "its host is a private or reserved address, which this server does not fetch from";
  if (error.code === "bad_request") return error.message;
  if (error.code === "upstream_timeout") return `it did not answer within ${TIMEOUT_MS / 1000} s`;
  if (error.message.includes("exceeded")) return `it is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB`;
  if (error.message.includes("redirected")) return "its URL redirects, which is not allowed";
  return "its server could not be reached";
}
