import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type Provider from "oidc-provider";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../lib/errors.ts";
import type { WindowLimiter } from "../modules/gateway/rate-limit.ts";
import {
  type AccountLinkOptions,
  accountLinkRoutes,
  mailVerificationLink,
  outboxUrlOf,
} from "./account-links.routes.ts";
import { createAccount, signIn } from "./accounts.ts";
import { CLIENT_ADDRESS } from "./client-metadata-documents.ts";
import { interactionPolicy } from "./interaction-policy.ts";
import { renderConsentPage, renderErrorPage, renderSignInPage, renderSignUpPage } from "./pages.ts";

const assetsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "assets");
// The pages' stylesheet is the shared page shell's (pages/pages.routes.ts).
const assets = new Map([
  [
    "sign-out.js",
    { type: "text/javascript; charset=utf-8", body: readFileSync(path.join(assetsDir, "sign-out.js")) },
  ],
]);

type FormBody = Record<string, string | undefined>;
type UidParams = { uid: string };

/** Mounts the embedded issuer at /oidc: our sign-in/sign-up pages plus oidc-provider's endpoints. */
export async function identityRoutes(
  app: FastifyInstance,
  options: {
    provider: Provider;
    db: Database;
    config: Config;
    publicUrl: string;
    /** Counts dynamic client registrations (POST /oidc/reg) per client address. */
    registrationLimiter: WindowLimiter;
  } & AccountLinkOptions,
) {
  const { provider, db, publicUrl, links, registrationLimiter } = options;
  const outboxUrl = outboxUrlOf(links);
  /** A page of this interaction: its forms may end at the client's redirect URI (interaction-policy.ts). */
  const sendInteractionPage = (
    reply: FastifyReply,
    details: InteractionDetails,
    status: number,
    html: string,
  ) =>
    sendPage(
      reply.header("content-security-policy", interactionPolicy(options.config, details.params.redirect_uri)),
      status,
      html,
    );

  // Our interaction pages, with their own form parser.
  await app.register(async (pages) => {
    pages.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 16 * 1024 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    await pages.register(accountLinkRoutes, {
      links,
      onEmailVerified: options.onEmailVerified,
      onAccountRecovered: options.onAccountRecovered,
      sessions: options.sessions,
    });

    pages.get<{ Params: { name: string } }>("/oidc/assets/:name", async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return reply.status(404).type("text/plain").send("Not found");
      return reply.type(asset.type).header("cache-control", "public, max-age=3600").send(asset.body);
    });

    pages.get<{ Params: UidParams; Querystring: { screen?: string } }>(
      "/oidc/interaction/:uid",
      async (request, reply) => {
        const details = await loadInteraction(provider, request, reply);
        if (!details) return;
        if (details.prompt.name === "consent")
          return sendInteractionPage(reply, details, 200, await consentPage(provider, details));
        const wantsSignUp =
          request.query.screen === "signup" ||
          (request.query.screen !== "signin" && details.params.screen_hint === "signup");
        return sendInteractionPage(
          reply,
          details,
          200,
          wantsSignUp
            ? renderSignUpPage({ uid: details.uid, outboxUrl })
            : renderSignInPage({ uid: details.uid }),
        );
      },
    );

    pages.post<{ Params: UidParams; Body: FormBody }>(
      "/oidc/interaction/:uid/login",
      async (request, reply) => {
        const details = await loadInteraction(provider, request, reply);
        if (!details) return;
        const email = String(request.body?.email ?? "");
        const password = String(request.body?.password ?? "");
        if (!email.trim() || !password) {
          return sendInteractionPage(
            reply,
            details,
            400,
            renderSignInPage({ uid: details.uid, email, error: "Enter your email and password." }),
          );
        }
        const result = await signIn(db, { email, password, ip: request.ip });
        if (!result.ok) {
          const status = result.reason === "throttled" ? 429 : 401;
          if (result.reason === "throttled") reply.header("retry-after", String(15 * 60));
          return sendInteractionPage(
            reply,
            details,
            status,
            renderSignInPage({ uid: details.uid, email, error: result.message }),
          );
        }
        return finishLogin(provider, request, reply, result.account.id);
      },
    );

    pages.post<{ Params: UidParams; Body: FormBody }>(
      "/oidc/interaction/:uid/register",
      async (request, reply) => {
        const details = await loadInteraction(provider, request, reply);
        if (!details) return;
        const values = {
          email: String(request.body?.email ?? ""),
          display_name: String(request.body?.display_name ?? ""),
        };
        const result = await createAccount(db, {
          email: values.email,
          displayName: values.display_name,
          password: String(request.body?.password ?? ""),
        });
        if (!result.ok) {
          const taken = result.problems.email?.startsWith("An account with this email");
          return sendInteractionPage(
            reply,
            details,
            taken ? 409 : 400,
            renderSignUpPage({ uid: details.uid, values, problems: result.problems, outboxUrl }),
          );
        }
        // The person goes on at once: only operator rights and payouts wait for the address.
        mailVerificationLink(links, result.account, request.log);
        return finishLogin(provider, request, reply, result.account.id);
      },
    );

    pages.post<{ Params: UidParams; Body: FormBody }>(
      "/oidc/interaction/:uid/consent",
      async (request, reply) => {
        const details = await loadInteraction(provider, request, reply);
        if (!details) return;
        if (details.prompt.name !== "consent")
          return sendPage(
            reply,
            400,
            renderErrorPage({
              title: "Nothing to approve",
              message: "This sign-in is not waiting for your consent.",
              homeUrl: publicUrl,
            }),
          );
        reply.hijack();
        const result =
          request.body?.decision === "allow"
            ? { consent: { grantId: await grantConsent(provider, details) } }
            : { error: "access_denied", error_description: "The user denied access" };
        await provider.interactionFinished(request.raw, reply.raw, result, {
          mergeWithLastSubmission: true,
        });
      },
    );
  });

  // Authorization server metadata where MCP clients look for it first (RFC 8414 §3: the
  // well-known path with the issuer's path appended), the same document as the issuer's own.
  await app.register(async (metadata) => {
    const callback = provider.callback();
    const discovery = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      // As if asked at the issuer's own path, so that its endpoints' URLs keep the /oidc prefix.
      const raw = request.raw as IncomingMessage & { originalUrl?: string };
      raw.originalUrl = "/oidc/.well-known/openid-configuration";
      raw.url = "/.well-known/openid-configuration";
      callback(raw, reply.raw as ServerResponse);
    };
    metadata.get("/.well-known/oauth-authorization-server/oidc", { schema: { hide: true } }, discovery);
    metadata.get("/.well-known/openid-configuration/oidc", { schema: { hide: true } }, discovery);
  });

  // Everything else under /oidc is oidc-provider (a Koa app); it reads the untouched request stream.
  await app.register(async (issuer) => {
    issuer.removeAllContentTypeParsers();
    issuer.addContentTypeParser("*", (_req, _payload, done) => done(null));
    // Anyone may register a client (MCP clients do, RFC 7591), so registrations are counted per
    // address; past the limit, 429 with Retry-After in OAuth's error shape.
    issuer.addHook("onRequest", async (request, reply) => {
      if (request.method !== "POST" || !/^\/oidc\/reg\/?(?:\?|$)/.test(request.url)) return;
      try {
        await registrationLimiter.hit(request.ip);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== "rate_limited") throw error;
        return reply
          .status(429)
          .headers(error.headers ?? {})
          .header("cache-control", "no-store")
          .send({ error: "rate_limited", error_description: error.message });
      }
    });
    const callback = provider.callback();
    const forward = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      const raw = request.raw as IncomingMessage & { originalUrl?: string; [CLIENT_ADDRESS]?: string };
      raw[CLIENT_ADDRESS] = request.ip;
      raw.originalUrl = raw.url;
      // The issuer's own paths start with "/": "/oidc?x=1" is its root "/?x=1", not "?x=1".
      const rest = raw.url?.slice("/oidc".length) ?? "";
      raw.url = rest.startsWith("/") ? rest : `/${rest}`;
      callback(raw, reply.raw as ServerResponse);
    };
    issuer.all("/oidc", forward);
    issuer.all("/oidc/*", forward);
  });

  async function loadInteraction(
    p: Provider,
    request: FastifyRequest<{ Params: UidParams }>,
    reply: FastifyReply,
  ) {
    try {
      const details = await p.interactionDetails(request.raw, reply.raw);
      if (details.uid !== request.params.uid) throw new Error("interaction mismatch");
      return details;
    } catch {
      sendPage(
        reply,
        400,
        renderErrorPage({
          title: "Your sign-in session expired",
          message: "This sign-in page is no longer valid. Go back to Promptmint and start signing in again.",
          homeUrl: publicUrl,
        }),
      );
      return undefined;
    }
  }
}

async function finishLogin(
  provider: Provider,
  request: FastifyRequest,
  reply: FastifyReply,
  accountId: string,
) {
  reply.hijack();
  await provider.interactionFinished(
    request.raw,
    reply.raw,
    { login: { accountId, remember: true } },
    { mergeWithLastSubmission: false },
  );
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.status(status).header("cache-control", "no-store").type("text/html; charset=utf-8").send(html);
}

type InteractionDetails = Awaited<ReturnType<Provider["interactionDetails"]>>;

async function consentPage(provider: Provider, details: InteractionDetails): Promise<string> {
  const clientId = String(details.params.client_id);
  const client = await provider.Client.find(clientId);
  const resource = details.params.resource;
  // A client named by its metadata document's URL (CIMD) chose its own name: the person also sees
  // the host that vouches for it.
  const documentHost = clientId.startsWith("https://") ? URL.parse(clientId)?.host : undefined;
  const name = client?.clientName ?? clientId;
  return renderConsentPage({
    uid: details.uid,
    clientName: documentHost && name !== clientId ? `${name} (${documentHost})` : name,
    redirectHost: URL.parse(String(details.params.redirect_uri))?.host ?? "an unknown address",
    resources: (Array.isArray(resource) ? resource : resource ? [resource] : []).map(String),
  });
}

/** The user allowed the client: its grant gains what the request asked and was missing. */
async function grantConsent(provider: Provider, details: InteractionDetails): Promise<string> {
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId: details.session?.accountId, clientId: String(details.params.client_id) });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(" "));
  return grant.save();
}
