import { createHash } from "node:crypto";
import type { JWK } from "jose";
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from "oidc-provider";
import { type Config, EMBEDDED_ISSUER_KEY, EMBEDDED_SPA_CLIENT_ID } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { SessionChecks } from "../modules/auth/sessions.ts";
import type { WindowLimiter } from "../modules/gateway/rate-limit.ts";
import { isMcpResource, MCP_SCOPE } from "../modules/mcp/resources.ts";
import { findAccountById } from "./accounts.ts";
import { clientIdMetadataDocuments, TOO_MANY_DOCUMENTS } from "./client-metadata-documents.ts";
import { createOidcAdapterFactory, keepRegisteredClient } from "./oidc-adapter.ts";
import { renderErrorPage, renderSignOutPage } from "./pages.ts";
import { keepOneSuccessor } from "./refresh-successors.ts";

export const API_SCOPE = "api";
const DAY = 24 * 60 * 60;

/** Where the SPA may be served from: the public URL, plus Vite's dev server outside production. */
export function spaOrigins(config: Config): string[] {
  const origins = [new URL(config.publicUrl).origin];
  if (!config.isProduction) origins.push("http://localhost:5173", "http://127.0.0.1:5173");
  return [...new Set(origins)];
}

/**
 * The embedded issuer at /oidc: authorization code + PKCE S256 for the SPA, JWT access tokens for
 * the API audience (resource indicators), refresh tokens, revocation and end-session. Storage and
 * signing keys are in PostgreSQL.
 */
export async function createOidcProvider(
  config: Config,
  db: Database,
  signingKeys: JWK[],
  sessions: SessionChecks,
  registrationLimiter: WindowLimiter,
): Promise<Provider> {
  const issuer = config.oidc.issuer;
  if (!issuer) throw new Error("embedded issuer needs an issuer URL");
  const audience = config.oidc.audience;
  const origins = spaOrigins(config);
  const cookieKey = createHash("sha256").update(`oidc-cookies:${config.secretKey}`).digest("base64url");
  // Short-lived API tokens (OIDC_ACCESS_TOKEN_TTL_SECONDS, 5 minutes by default): the SPA renews
  // them with its refresh token before they expire. A revoked session's tokens are refused at once
  // anyway (modules/auth/sessions.ts); this bounds what a token copied out of a browser is worth.
  const accessTokenTtl = config.oidc.accessTokenTtlSeconds;
  const metadataDocuments = clientIdMetadataDocuments(config, registrationLimiter);

  const configuration: Configuration = {
    adapter: createOidcAdapterFactory(db, sessions),
    clients: [
      {
        client_id: EMBEDDED_SPA_CLIENT_ID,
        client_name: "Promptmint",
        application_type: "web",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: origins.map((origin) => `${origin}/auth/callback`),
        post_logout_redirect_uris: origins.map((origin) => `${origin}/`),
      },
    ],
    jwks: { keys: signingKeys as NonNullable<Configuration["jwks"]>["keys"] },
    cookies: { keys: [cookieKey] },
    scopes: ["openid", "offline_access", "profile", "email", API_SCOPE, MCP_SCOPE],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
    },
    conformIdTokenClaims: false,
    async findAccount(_ctx, id) {
      const account = await findAccountById(db, id);
      if (!account) return undefined;
      return {
        accountId: account.id,
        async claims() {
          return {
            sub: account.id,
            email: account.email,
            // True only once the person opened the link mailed to this address (docs/decisions/041).
            email_verified: account.emailVerified,
            name: account.displayName,
            preferred_username: account.email,
          };
        },
      };
    },
    interactions: { url: (_ctx, interaction) => `/oidc/interaction/${interaction.uid}` },
    // Dynamic registration's metadata is checked here (oidc-provider calls the validator once per
    // listed property, with the whole client metadata; the SPA's own client is exempt): every
    // string for control characters and size (client_name's turn), then the redirect URIs.
    extraClientMetadata: {
      properties: ["client_name", "redirect_uris"],
      validator(_ctx, key, value, metadata) {
        if (metadata.client_id === EMBEDDED_SPA_CLIENT_ID) return;
        if (key === "client_name") {
          const problem = refusedClientMetadata(metadata);
          if (problem) throw new errors.InvalidClientMetadata(problem);
          return;
        }
        const refused = refusedRedirectUri(value, origins);
        if (refused) throw new errors.InvalidRedirectUri(refused);
        // A loopback listener or a private-use scheme is a native app's redirect (RFC 8252), and a
        // native client is what oidc-provider lets use any port of a loopback URI (§7.3: a desktop
        // client listens on whatever port is free, and may reuse its registration or its metadata
        // document's `http://127.0.0.1/callback` on another one). The SDK's clients register
        // without `application_type`, which defaults to web: exact ports, so a new port failed.
        if (isNativeRedirectList(value)) metadata.application_type = "native";
      },
    },
    extraParams: ["screen_hint"],
    pkce: { required: () => true },
    fetch: metadataDocuments.fetch,
    fetchResponseBodyLimits: metadataDocuments.fetchResponseBodyLimits,
    features: {
      // An MCP client may name itself by the https URL of its metadata instead of registering.
      clientIdMetadataDocument: metadataDocuments.feature,
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      // MCP clients register themselves (MCP authorization, RFC 7591): public clients with PKCE,
      // which get tokens for MCP endpoints only, after the user's consent.
      registration: { enabled: true, issueRegistrationAccessToken: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.type = "html";
          ctx.body = renderSignOutPage(form);
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, client) =>
          client?.clientId === EMBEDDED_SPA_CLIENT_ID ? audience : undefined,
        useGrantedResource: async () => true,
        // The whole API for the SPA alone; an MCP endpoint for any client, the token then good
        // at that endpoint only (docs/decisions/034-mcp.md).
        getResourceServerInfo: async (_ctx, resource, client) => {
          const forSpa = resource === audience && client.clientId === EMBEDDED_SPA_CLIENT_ID;
          if (!forSpa && !isMcpResource(config.publicUrl, resource)) throw new errors.InvalidTarget();
          return {
            scope: forSpa ? API_SCOPE : MCP_SCOPE,
            audience: resource,
            accessTokenFormat: "jwt",
            accessTokenTTL: accessTokenTtl,
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
    // The SPA is first-party and public: it gets refresh tokens without a separate consent step.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // API tokens carry the profile claims so the API can create the local user from the token
    // alone, and their grant, so the API refuses them once the grant is revoked.
    async extraTokenClaims(_ctx, token) {
      if (token.kind !== "AccessToken" || !token.accountId) return undefined;
      const account = await findAccountById(db, token.accountId);
      const grant = token.grantId ? { grant_id: token.grantId } : {};
      return account
        ? { email: account.email, email_verified: account.emailVerified, name: account.displayName, ...grant }
        : grant;
    },
    // Our own SPA needs no consent screen: its grant is created on first sign-in. Any other
    // client (registered by an MCP client) asks the user on the consent page (identity.routes.ts).
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const client = ctx.oidc.client;
      const session = ctx.oidc.session;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) {
        const grant = await ctx.oidc.provider.Grant.find(grantId);
        if (grant) return grant;
      }
      if (client.clientId !== EMBEDDED_SPA_CLIENT_ID) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope("openid profile email offline_access");
      grant.addResourceScope(audience, API_SCOPE);
      await grant.save();
      session.grantIdFor(client.clientId, grant.jti);
      return grant;
    },
    // Userinfo only: discovery, keys, registration, token and revocation are open to any origin
    // without cookies (lib/cors.ts sets their headers first, and oidc-provider then leaves them).
    clientBasedCORS: (_ctx, origin) => origins.includes(origin),
    renderError: async (ctx, out, error) => {
      // A client ID metadata document that could not be fetched: the detail says why, in our words.
      const detail =
        out.error_description === "client_id metadata document fetch failed" &&
        typeof (error as { error_detail?: unknown }).error_detail === "string"
          ? ` ${(error as { error_detail: string }).error_detail}`
          : out.error_description === "client_id metadata document fetch not allowed"
            ? ` ${TOO_MANY_DOCUMENTS}`
            : "";
      ctx.type = "html";
      ctx.body = renderErrorPage({
        title: "Sign-in could not continue",
        message: `${String(out.error_description ?? out.error ?? "Unknown error")}${detail}`,
        homeUrl: config.publicUrl,
      });
    },
    ttl: {
      AccessToken: accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      Interaction: 60 * 60,
      Grant: 30 * DAY,
      Session: 30 * DAY,
      RefreshToken: 30 * DAY,
    },
  };

  const provider = new Provider(issuer, configuration);
  provider.proxy = true;
  // Signing out at the issuer ends the account's sessions everywhere, like the API's sign-out:
  // oidc-provider keeps offline_access grants (the SPA's refresh tokens) through an end-session.
  provider.use(async (ctx, next) => {
    await next();
    const accountId = ctx.oidc?.route === "end_session_confirm" ? ctx.oidc.session?.accountId : undefined;
    if (accountId && ctx.status < 400)
      await sessions.endAll({ issuer: EMBEDDED_ISSUER_KEY, subject: accountId });
  });
  // A refresh token used again within its grace gets the successor its first use got, the one
  // oidc-provider just minted deleted: one grant, one live chain (decision 065).
  provider.use(async (ctx, next) => {
    await next();
    const rotated =
      ctx.oidc?.route === "token" && ctx.status === 200 ? ctx.oidc.entities.RotatedRefreshToken : undefined;
    const body = ctx.body as { refresh_token?: unknown } | undefined;
    if (rotated?.jti && typeof body?.refresh_token === "string")
      body.refresh_token = await keepOneSuccessor(db, rotated.jti, body.refresh_token);
  });
  // A registered client that obtains a token lives on; one that never does expires a day after
  // registering (oidc-adapter.ts).
  provider.use(async (ctx, next) => {
    await next();
    const clientId =
      ctx.oidc?.route === "token" && ctx.status === 200 ? ctx.oidc.client?.clientId : undefined;
    if (clientId && clientId !== EMBEDDED_SPA_CLIENT_ID) await keepRegisteredClient(db, clientId);
  });
  return provider;
}

const MAX_CLIENT_NAME_LENGTH = 200;
const MAX_STRING_LENGTH = 2048;
/** A JWK's members (an x5c certificate chain) may be longer than a URI. */
const MAX_NESTED_STRING_LENGTH = 8192;
const MAX_ARRAY_LENGTH = 20;
/**
 * C0 and C1 controls, DEL, line and paragraph separators and bidirectional overrides: nothing a
 * client's name or URI needs, and things a consent page must not show (or PostgreSQL store: NUL).
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/**
 * Why a registered client's metadata is refused, naming the field, if it is: any string (at any
 * depth: jwks) with a control character or too long, an array with too many members.
 */
export function refusedClientMetadata(metadata: Record<string, unknown>): string | undefined {
  const check = (field: string, value: unknown, depth: number): string | undefined => {
    if (typeof value === "string") {
      if (CONTROL_CHARACTERS.test(value)) return `${field} must not contain control characters`;
      const max =
        field === "client_name"
          ? MAX_CLIENT_NAME_LENGTH
          : depth > 1
            ? MAX_NESTED_STRING_LENGTH
            : MAX_STRING_LENGTH;
      if (value.length > max) return `${field} must be at most ${max} characters`;
      return undefined;
    }
    if (Array.isArray(value)) {
      if (value.length > MAX_ARRAY_LENGTH) return `${field} must have at most ${MAX_ARRAY_LENGTH} entries`;
      for (const [index, item] of value.entries()) {
        const problem = check(`${field}[${index}]`, item, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    if (value && typeof value === "object") {
      if (depth > 4) return `${field} is nested too deeply`;
      for (const [name, item] of Object.entries(value)) {
        if (CONTROL_CHARACTERS.test(name)) return `${field} must not contain control characters in its keys`;
        const problem = check(`${field}.${name}`, item, depth + 1);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  for (const [field, value] of Object.entries(metadata)) {
    const problem = check(field, value, 0);
    if (problem) return problem;
  }
  return undefined;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A native app's private-use URI scheme (RFC 8252 §7.1): a reverse domain name, so it has a dot
 * (`com.example.app:/callback`); oidc-provider accepts it from `application_type: "native"` only.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+:$/;

/**
 * Redirect URIs only a native app has (RFC 8252): some loopback `http` listener or private-use
 * scheme, and no `https` URI on a loopback host (which oidc-provider refuses from native clients;
 * such a list stays a web client's, exact ports).
 */
export function isNativeRedirectList(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  const urls = value.map((uri) => (typeof uri === "string" ? URL.parse(uri) : null));
  if (urls.some((url) => url?.protocol === "https:" && LOOPBACK_HOSTS.has(url.hostname))) return false;
  return urls.some(
    (url) =>
      (url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) ||
      (url !== null && PRIVATE_USE_SCHEME.test(url.protocol)),
  );
}

/**
 * Why a registered client's redirect URI is refused, if it is: https, http to a loopback address
 * (a desktop client's local listener, RFC 8252), or a native app's private-use scheme; and never
 * on the SPA's origins, so a registered client cannot receive codes meant for the SPA.
 */
export function refusedRedirectUri(value: unknown, spaOrigins: string[]): string | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const uri of value) {
    const url = typeof uri === "string" ? URL.parse(uri) : null;
    if (!url) return "redirect_uris must be absolute URLs";
    if (spaOrigins.includes(url.origin))
      return `redirect_uris must not be on ${url.origin}: it is Promptmint's own`;
    if (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) continue;
    if (PRIVATE_USE_SCHEME.test(url.protocol)) continue;
    return `redirect_uris must use https, http on localhost or 127.0.0.1, or a native app's reverse-domain scheme such as com.example.app: (refused: ${uri})`;
  }
  return undefined;
}
