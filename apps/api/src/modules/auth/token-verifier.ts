import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { AppError } from "../../lib/errors.ts";

/** SPEC §9: 300 s clock tolerance; key-set fetch timeout 5 s, cool-down 30 s, cache 10 minutes. */
const CLOCK_TOLERANCE_S = 300;
const JWKS_OPTIONS = { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 600_000 };

export interface VerifiedToken {
  issuer: string;
  subject: string;
  claims: JWTPayload & {
    email?: string;
    /** A boolean by the standard; some issuers send the string "true". */
    email_verified?: boolean | string;
    name?: string;
    preferred_username?: string;
    given_name?: string;
    family_name?: string;
  };
  raw: string;
}

/**
 * `resource`: a protected resource besides the API whose tokens the caller also accepts (an MCP
 * endpoint, modules/mcp/resources.ts): a token for it is valid there and nowhere else.
 */
export type TokenVerifier = ((token: string, resource?: string) => Promise<VerifiedToken>) & {
  /** Profile claims from the issuer's userinfo endpoint, for issuers whose access tokens carry no email. */
  fetchUserInfo(token: string): Promise<Record<string, unknown> | undefined>;
};

/**
 * Verifies bearer JWTs: signature against the issuer's key set, issuer, audience, expiry.
 * The embedded issuer's keys are read locally; an external issuer's come from its jwks_uri.
 */
export function createTokenVerifier(options: {
  issuer: string;
  audience: string;
  localJwks?: { keys: JWK[] };
  fetchImpl?: typeof fetch;
  /**
   * What users are keyed by instead of the `iss` URL. The embedded issuer's URL follows
   * PUBLIC_URL; keying its users by a constant keeps their accounts when PUBLIC_URL changes.
   */
  issuerKey?: string;
}): TokenVerifier {
  const fetchImpl = options.fetchImpl ?? fetch;
  let keySet: JWTVerifyGetKey | undefined = options.localJwks
    ? createLocalJWKSet(options.localJwks)
    : undefined;
  let discovery: Promise<{ jwks_uri?: string; userinfo_endpoint?: string }> | undefined;

  function discover() {
    discovery ??= (async () => {
      const url = `${options.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
      const response = await fetchImpl(url, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      if (!response?.ok) {
        discovery = undefined;
        throw new AppError("unavailable", "Identity provider discovery failed; try again shortly");
      }
      return (await response.json()) as { jwks_uri?: string; userinfo_endpoint?: string };
    })();
    return discovery;
  }

  async function getKeySet(): Promise<JWTVerifyGetKey> {
    if (keySet) return keySet;
    const { jwks_uri } = await discover();
    if (!jwks_uri) throw new AppError("unavailable", "Identity provider publishes no jwks_uri");
    keySet = createRemoteJWKSet(new URL(jwks_uri), JWKS_OPTIONS);
    return keySet;
  }

  const verify = async (token: string, resource?: string): Promise<VerifiedToken> => {
    const jwks = await getKeySet();
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: resource ? [options.audience, resource] : options.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        algorithms: ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"],
        requiredClaims: ["sub", "exp", "iat"],
      });
      if (!payload.sub || !payload.iss) throw new AppError("unauthorized", "Access token has no subject");
      return {
        issuer: options.issuerKey ?? payload.iss,
        subject: payload.sub,
        claims: payload as VerifiedToken["claims"],
        raw: token,
      };
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError("unauthorized", describeTokenError(error));
    }
  };

  return Object.assign(verify, {
    async fetchUserInfo(token: string) {
      if (options.localJwks) return undefined;
      const { userinfo_endpoint } = await discover().catch(() => ({ userinfo_endpoint: undefined }));
      if (!userinfo_endpoint) return undefined;
      const response = await fetchImpl(userinfo_endpoint, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5_000),
      }).catch(() => undefined);
      return response?.ok ? ((await response.json()) as Record<string, unknown>) : undefined;
    },
  });
}

function describeTokenError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "Access token has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return "Access token is not meant for this API";
    if (error.claim === "iss") return "Access token was issued by an unknown issuer";
    return `Access token claim '${error.claim}' is invalid`;
  }
  if (
    error instanceof joseErrors.JWSSignatureVerificationFailed ||
    error instanceof joseErrors.JWKSNoMatchingKey
  ) {
    return "Access token signature is invalid";
  }
  return "Access token is invalid";
}
