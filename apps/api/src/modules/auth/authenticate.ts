import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { AppError } from "../../lib/errors.ts";
import { type LocalUser, upsertUserFromToken } from "./auth.service.ts";
import type { TokenVerifier, VerifiedToken } from "./token-verifier.ts";

declare module "fastify" {
  interface FastifyRequest {
    token: VerifiedToken | null;
    user: LocalUser | null;
  }
}

export interface AuthGuards {
  /** A valid bearer token for our API audience. */
  requireToken(request: FastifyRequest): Promise<void>;
  /** A valid token and the local, active user it belongs to (created on first sight). */
  requireUser(request: FastifyRequest): Promise<void>;
}

export function createAuthGuards(options: { verifyToken: TokenVerifier; db: Database }): AuthGuards {
  async function requireToken(request: FastifyRequest) {
    const header = request.headers.authorization;
    if (!header) throw new AppError("unauthorized", "Authentication required: send an Authorization: Bearer token", bearerChallenge());
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) throw new AppError("unauthorized", "Authorization header must be 'Bearer <token>'", bearerChallenge());
    try {
      request.token = await options.verifyToken(match[1]);
    } catch (error) {
      if (error instanceof AppError && error.code === "unauthorized") {
        throw new AppError("unauthorized", error.message, bearerChallenge("invalid_token"));
      }
      throw error;
    }
  }

  return {
    requireToken,
    async requireUser(request) {
      await requireToken(request);
      const user = await upsertUserFromToken(options.db, request.token as VerifiedToken, { creator: false, refreshEmail: false });
      if (!user.isActive) throw new AppError("forbidden", "This account is deactivated");
      request.user = user;
    },
  };
}

function bearerChallenge(error?: string) {
  return { headers: { "www-authenticate": error ? `Bearer error="${error}"` : "Bearer" } };
}

/** For handlers behind requireUser: the user, typed as present. */
export function currentUser(request: FastifyRequest): LocalUser {
  if (!request.user) throw new AppError("unauthorized", "Authentication required");
  return request.user;
}
