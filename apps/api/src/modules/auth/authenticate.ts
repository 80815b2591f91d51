import { isUuid, ORGANIZATION_HEADER } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { authenticates } from "../../lib/body-limits.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { bootstrapOperator, isOperator } from "../admin/operators.ts";
import { isUserSuspended } from "../admin/suspensions.ts";
import { findUserByApiKey, type KeyScope } from "../keys/keys.service.ts";
import { CAPABILITY_TEXT, routeAccess } from "../organizations/access.ts";
import { type ActingMember, findMembership, roleMay } from "../organizations/membership.ts";
import { claimsVerifiedEmail, findUserByToken, type LocalUser, upsertUserFromToken } from "./auth.service.ts";
import type { EmailVerification } from "./email-verification.ts";
import type { SessionChecks } from "./sessions.ts";
import type { TokenVerifier, VerifiedToken } from "./token-verifier.ts";

declare module "fastify" {
  interface FastifyRequest {
    token: VerifiedToken | null;
    /**
     * The account the request acts for: the signed-in person, an organization they act for
     * (`Promptmint-Organization`), or the owner of the API key (decision 084).
     */
    user: LocalUser | null;
    /** The person behind the request (token routes): the signed-in user, whoever `user` is. */
    person: LocalUser | null;
    /** The member acting for an organization (its member with a token, or its key's maker). */
    member: ActingMember | null;
    /** Set when the caller authenticated with an API key rather than a token. */
    apiKeyId: string | null;
    /** What that key may do: its spend limit and allowed apps (decision 035). */
    apiKeyScope: KeyScope | null;
  }
}

export interface AuthGuards {
  /** A valid bearer token for our API audience, of a session that has not ended. */
  requireToken(request: FastifyRequest): Promise<void>;
  /**
   * A valid token and the local, active user it belongs to (created on first sight), not suspended
   * by the operator (403 account_suspended, decision 046).
   */
  requireUser(request: FastifyRequest): Promise<void>;
  /** requireUser, but a suspended user passes: their own profile and roles, so the SPA can say why. */
  requireUserEvenSuspended(request: FastifyRequest): Promise<void>;
  /** A user by API key (`Bearer pm_…`) or by token: for the gateway, which both may call. */
  requireCaller(request: FastifyRequest): Promise<void>;
  /** requireCaller at a protected resource of its own (an MCP endpoint): its tokens are accepted too. */
  requireCallerAt(request: FastifyRequest, resource: string): Promise<void>;
  /** Whether this address is in ADMIN_EMAILS: verifying it would make its owner an operator. */
  isBootstrapOperator(email: string): boolean;
  /** Creates or updates the local user from the token (login/register). */
  signInUser(token: VerifiedToken, options: { creator: boolean }): Promise<LocalUser>;
}

export function createAuthGuards(options: {
  verifyToken: TokenVerifier;
  db: Database;
  /** ADMIN_EMAILS: the operator bootstrap for verified addresses (admin/operators.ts). */
  adminEmails: string[];
  emailVerification: Pick<EmailVerification, "refresh">;
  sessions: Pick<SessionChecks, "assertLive">;
}): AuthGuards {
  async function requireToken(request: FastifyRequest, resource?: string) {
    const header = request.headers.authorization;
    if (!header)
      throw new AppError(
        "unauthorized",
        "Authentication required: send an Authorization: Bearer token",
        bearerChallenge(),
      );
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1])
      throw new AppError("unauthorized", "Authorization header must be 'Bearer <token>'", bearerChallenge());
    try {
      const token = await options.verifyToken(match[1], resource);
      await options.sessions.assertLive(token);
      request.token = token;
    } catch (error) {
      if (error instanceof AppError && error.code === "unauthorized") {
        throw new AppError("unauthorized", error.message, bearerChallenge("invalid_token"));
      }
      throw error;
    }
  }

  /**
   * Some issuers (Auth0, Logto) put no email, or no email_verified, in access tokens; their
   * userinfo endpoint has them.
   */
  async function withProfileClaims(token: VerifiedToken): Promise<VerifiedToken> {
    if (typeof token.claims.email === "string" && token.claims.email_verified !== undefined) return token;
    const info = await options.verifyToken.fetchUserInfo(token.raw);
    if (info?.sub !== token.subject) return token;
    return { ...token, claims: { ...token.claims, ...info, sub: token.subject } };
  }

  async function requireUser(request: FastifyRequest, resource?: string, allowSuspended = false) {
    await requireToken(request, resource);
    const token = request.token as VerifiedToken;
    let user = await findUserByToken(options.db, token);
    // First sight, or a token saying the address is now verified: the claims decide (and may grant).
    if (!user || (!user.emailVerified && claimsVerifiedEmail(token.claims))) {
      user = await options.emailVerification.refresh(
        await upsertUserFromToken(options.db, await withProfileClaims(token), {
          creator: false,
          refreshEmail: false,
        }),
      );
      await bootstrapOperator(options.db, options.adminEmails, user);
    }
    if (!user.isActive) throw new AppError("forbidden", "This account is deactivated");
    // Read on every request (the user row is not cached): a suspension made through any process
    // is honoured by every other at once.
    if (!allowSuspended && (await isUserSuspended(options.db, user.id))) throw suspendedAccount();
    request.user = user;
    request.person = user;
    await actForOrganization(request, user);
  }

  /**
   * `Promptmint-Organization: <id>`: the person acts for that organization, if they are a member
   * whose role may use this route (modules/organizations/access.ts); the account routes then read
   * and write the organization's data (`request.user` is its account). Not a member, or no such
   * organization: 404, as for any account's data that is not yours. The membership comes from a
   * cache every process drops when memberships change (membership.ts), so a removed member or a
   * lowered role is refused everywhere within moments.
   */
  async function actForOrganization(request: FastifyRequest, person: LocalUser) {
    const header = request.headers[ORGANIZATION_HEADER];
    if (header === undefined) return;
    const access = routeAccess(request.method, request.routeOptions.url ?? request.url);
    if (access === "personal") return;
    // As the account's id is written (lowercase): `request.member` is compared with it.
    const id = typeof header === "string" ? header.trim().toLowerCase() : "";
    if (!isUuid(id))
      throw invalidFields({ [ORGANIZATION_HEADER]: "must be the id of an organization you are a member of" });
    const membership = await findMembership(options.db, id, person.id);
    if (!membership) throw notFound("Organization");
    const { organization, ...member } = membership;
    if (!roleMay(member.role, access))
      throw organizationRoleRefusal(organization.displayName, member.role, CAPABILITY_TEXT[access]);
    if (await isUserSuspended(options.db, organization.id)) throw suspendedAccount();
    request.user = organization;
    request.member = member;
  }

  async function requireCaller(request: FastifyRequest, resource?: string) {
    const match = /^Bearer\s+(pm_\S+)$/i.exec(request.headers.authorization ?? "");
    if (!match?.[1]) return requireUser(request, resource);
    const found = await findUserByApiKey(options.db, match[1]);
    if (!found)
      throw new AppError(
        "unauthorized",
        "API key is invalid or has been revoked",
        bearerChallenge("invalid_token"),
      );
    if (!found.user.isActive) throw new AppError("forbidden", "This account is deactivated");
    if (found.suspended) throw suspendedAccount();
    refuseExpiredKey(found.scope);
    refuseAppNotAllowed(found.scope, (request.params as { slug?: unknown } | undefined)?.slug);
    if (found.user.kind === "organization") request.member = organizationKeyMaker(found.user, found.scope);
    request.user = found.user;
    request.apiKeyId = found.scope.keyId;
    request.apiKeyScope = found.scope;
  }

  // Marked so that their routes keep the full body limit (lib/body-limits.ts).
  return {
    requireToken: authenticates((request: FastifyRequest) => requireToken(request)),
    requireUser: authenticates((request: FastifyRequest) => requireUser(request)),
    requireUserEvenSuspended: authenticates((request: FastifyRequest) =>
      requireUser(request, undefined, true),
    ),
    requireCaller: authenticates((request: FastifyRequest) => requireCaller(request)),
    requireCallerAt: requireCaller,
    isBootstrapOperator: (email) => options.adminEmails.includes(email.toLowerCase()),
    async signInUser(token, { creator }) {
      const user = await options.emailVerification.refresh(
        await upsertUserFromToken(options.db, await withProfileClaims(token), {
          creator,
          refreshEmail: true,
        }),
      );
      if (!user.isActive) throw new AppError("forbidden", "This account is deactivated");
      // Signing in is allowed (the SPA then shows why nothing else is); becoming a creator is not.
      if (creator && (await isUserSuspended(options.db, user.id))) throw suspendedAccount();
      await bootstrapOperator(options.db, options.adminEmails, user);
      return user;
    },
  };
}

/** Every credential of a suspended user (sign-in token, API key, OAuth token) answers this. */
function suspendedAccount(): AppError {
  return new AppError(
    "account_suspended",
    "This account is suspended by the platform's operator: its sign-in tokens and API keys are refused (only the profile and sign-out remain)",
  );
}

/**
 * An organization's key works for its maker while they are a member whose role may call (decision
 * 084): a key of a removed member is revoked with the removal; one whose maker's role was lowered
 * is refused, naming why, until an owner or admin raises it again.
 */
function organizationKeyMaker(organization: LocalUser, scope: KeyScope): ActingMember {
  const maker = scope.maker;
  if (!maker)
    throw new AppError(
      "unauthorized",
      "API key is invalid or has been revoked",
      bearerChallenge("invalid_token"),
    );
  if (!roleMay(maker.role, "call"))
    throw organizationRoleRefusal(
      organization.displayName,
      maker.role,
      CAPABILITY_TEXT.call,
      "This key's maker",
    );
  return maker;
}

/** 403 `organization_role`: the member's role may not do this. */
function organizationRoleRefusal(
  organization: string,
  role: string,
  what: string,
  who = "Your role",
): AppError {
  const whose =
    who === "Your role"
      ? `Your role in ${organization} is ${role}`
      : `${who} is now ${role} in ${organization}`;
  return new AppError(
    "organization_role",
    `${whose}: a ${role} may not ${what}. Ask an owner or admin of ${organization} for a role that may.`,
  );
}

/** A key past its expiry date: 401 naming the date, not the generic invalid-key answer. */
function refuseExpiredKey(scope: KeyScope): void {
  if (scope.expiresAt && scope.expiresAt.getTime() <= Date.now())
    throw new AppError(
      "api_key_expired",
      `This API key expired on ${scope.expiresAt.toISOString()}: create a new key or extend its expiry on the API keys page`,
      bearerChallenge("invalid_token"),
    );
}

/**
 * A key limited to some apps may not reach another one: 403 naming the app. Checked here for the
 * routes that name the app in their path (`/api/app/{slug}/…`), before anything else runs, and
 * again when a call is paid for (gateway/paid-call.ts), which covers routes naming it in the body.
 */
export function refuseAppNotAllowed(scope: KeyScope | null, slug: unknown): void {
  if (!scope?.allowedSlugs || typeof slug !== "string" || scope.allowedSlugs.includes(slug)) return;
  throw new AppError(
    "app_not_allowed_for_key",
    `This API key may not call the app '${slug}': it is limited to ${scope.allowedSlugs.length > 0 ? scope.allowedSlugs.map((allowed) => `'${allowed}'`).join(", ") : "apps that no longer exist"}`,
  );
}

function bearerChallenge(error?: string) {
  return { headers: { "www-authenticate": error ? `Bearer error="${error}"` : "Bearer" } };
}

/** For handlers behind requireUser: the user, typed as present. */
export function currentUser(request: FastifyRequest): LocalUser {
  if (!request.user) throw new AppError("unauthorized", "Authentication required");
  return request.user;
}

/**
 * The guard of operator-only routes (/admin, the usage export): a signed-in user holding the
 * operator role with a verified address; everyone else signed in gets 403, naming the unverified
 * address when that is what is missing.
 */
export function operatorGuard(db: Database, guards: AuthGuards) {
  return async (request: FastifyRequest) => {
    await guards.requireUser(request);
    const user = currentUser(request);
    // Verifying the address helps only someone who would then be an operator (a held role, or an
    // ADMIN_EMAILS address); anyone else is told plainly they are not one (issue 42).
    const wouldBeOperator =
      guards.isBootstrapOperator(user.email) || (await isOperator(db, { ...user, emailVerified: true }));
    if (!user.emailVerified && wouldBeOperator)
      throw new AppError(
        "email_unverified",
        `Only the platform's operators may use /admin, and ${user.email} is not verified yet: open the link we mailed to it (or resend it)`,
      );
    if (!(await isOperator(db, user)))
      throw new AppError(
        "forbidden",
        "Only the platform's operators may use /admin, and you are not one: an operator grants the role (npm run admin -- grant)",
      );
  };
}
