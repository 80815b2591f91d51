import type { Configuration } from "oidc-provider";
import type { Config } from "../config.ts";
import { AppError } from "../lib/errors.ts";
import { createSafeFetch } from "../lib/safe-fetch.ts";

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

export function clientIdMetadataDocuments(config: Config): {
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
    feature: { enabled: true, ack: DRAFT, cacheDuration: CACHE_SECONDS },
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
        // oidc-provider answers any failure as "client_id metadata document fetch failed"; the
        // reason stays in the server's log, as the error's cause.
        throw error instanceof AppError ? new Error(error.message, { cause: error }) : error;
      }
    },
    fetchResponseBodyLimits: {
      "client_id metadata document": MAX_DOCUMENT_BYTES,
      jwks_uri: 64 * 1024,
      sector_identifier_uri: 64 * 1024,
    },
  };
}
