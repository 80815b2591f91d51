import type { Config } from "../config.ts";
import { contentSecurityPolicy } from "../lib/security-headers.ts";

/**
 * The Content-Security-Policy of a sign-in, sign-up or consent page (docs/decisions/051).
 *
 * Each of these pages posts a form to the issuer, which answers with redirects that end at the
 * client's redirect URI: Chromium and Firefox apply `form-action` to every hop of a form's
 * redirect chain, so `form-action 'self'` alone stops the person at the last hop whenever the
 * client lives elsewhere (an MCP client's loopback listener, a web client, a native app's scheme).
 * The page's policy therefore also allows that one redirect URI's origin (or its scheme, for a
 * native app's private-use scheme) and nothing else. oidc-provider checked the URI against the
 * client's registration before the interaction existed, so it is one the client registered.
 */
export function interactionPolicy(config: Config, redirectUri: unknown): string {
  const target = formActionSource(redirectUri);
  return contentSecurityPolicy(config, [], target ? [target] : []);
}

/** A private-use URI scheme (RFC 8252 §7.1), as CSP spells a scheme-source: `com.example.app:`. */
const SCHEME = /^[a-z][a-z0-9+.-]{0,99}:$/;
/** Origins and schemes no form on our pages may be sent to, whatever a client registered. */
const NEVER = new Set(["javascript:", "data:", "blob:", "file:", "filesystem:", "vbscript:", "about:"]);

/**
 * The CSP source that matches `redirectUri`: its origin for http(s) (`http://127.0.0.1:8931`),
 * its scheme for a native app's own (`com.example.app:`). Anything that does not parse into one
 * of those, or would read as more than one source, gives none.
 */
export function formActionSource(redirectUri: unknown): string | undefined {
  if (typeof redirectUri !== "string") return undefined;
  const url = URL.parse(redirectUri);
  if (!url) return undefined;
  const scheme = url.protocol.toLowerCase();
  if (scheme === "http:" || scheme === "https:")
    return /^https?:\/\/[a-z0-9.\-[\]:]+$/i.test(url.origin) ? url.origin : undefined;
  return SCHEME.test(scheme) && !NEVER.has(scheme) ? scheme : undefined;
}
