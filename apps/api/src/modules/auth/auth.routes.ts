import {
  CreatorListSchema,
  CreatorSchema,
  LogoutResponseSchema,
  ProfileSchema,
  ProfileUpdateSchema,
  RolesSchema,
  VerificationEmailResultSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import { getOwnCreator, getProfile, getRoles, listCreators, updateProfile } from "./auth.service.ts";
import { type AuthGuards, currentUser } from "./authenticate.ts";
import type { EmailVerification } from "./email-verification.ts";
import type { SessionChecks } from "./sessions.ts";
import type { VerifiedToken } from "./token-verifier.ts";

const errors = errorResponses(400, 401, 403, 404, 409, 429);
const EmptyBodySchema = z.strictObject({}).nullish();
const security = [{ bearerAuth: [] }];

/** SPEC §7 "Creators, auth, profile". */
export const authRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  emailVerification: EmailVerification;
  sessions: Pick<SessionChecks, "endAll">;
}> = async (app, { db, guards, emailVerification, sessions }) => {
  const signInRoute = (path: string, creator: boolean, summary: string) =>
    app.post(
      path,
      {
        schema: {
          tags: ["auth"],
          summary,
          security,
          body: EmptyBodySchema,
          response: { 200: ProfileSchema, ...errors },
        },
        onRequest: guards.requireToken,
      },
      async (request) => {
        const user = await guards.signInUser(request.token as VerifiedToken, { creator });
        return getProfile(db, user);
      },
    );
  signInRoute(
    "/auth/login/",
    false,
    "Create or update the local user from the verified token; returns the profile",
  );
  signInRoute("/auth/register/", true, "Like login, and also makes the user a creator");

  app.post(
    "/auth/logout/",
    {
      schema: {
        tags: ["auth"],
        summary: "Sign out everywhere: this and every other access token issued until now stop working",
        security,
        body: EmptyBodySchema,
        response: { 200: LogoutResponseSchema, ...errors },
      },
      onRequest: guards.requireToken,
    },
    async (request) => {
      await sessions.endAll(request.token as VerifiedToken);
      return { success: true as const };
    },
  );

  app.get(
    "/auth/profile/",
    {
      schema: {
        tags: ["auth"],
        summary: "The signed-in user's profile (also while suspended)",
        security,
        response: { 200: ProfileSchema, ...errors },
      },
      onRequest: guards.requireUserEvenSuspended,
    },
    async (request) => getProfile(db, currentUser(request)),
  );

  app.patch(
    "/auth/profile/",
    {
      schema: {
        tags: ["auth"],
        summary: "Update names, username and creator display name (email cannot change)",
        security,
        body: ProfileUpdateSchema,
        response: { 200: ProfileSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => updateProfile(db, currentUser(request), request.body),
  );

  app.post(
    "/auth/verification-email/",
    {
      schema: {
        tags: ["auth"],
        summary:
          "Mail a new link to verify your email address (embedded issuer; at most one a minute, five an hour)",
        security,
        body: EmptyBodySchema,
        response: { 200: VerificationEmailResultSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => emailVerification.resend(currentUser(request)),
  );

  app.get(
    "/auth/roles/",
    {
      schema: {
        tags: ["auth"],
        summary: "The signed-in user's roles (also while suspended)",
        security,
        response: { 200: RolesSchema, ...errors },
      },
      onRequest: guards.requireUserEvenSuspended,
    },
    async (request) => getRoles(db, currentUser(request)),
  );

  app.get(
    "/creators/",
    {
      schema: {
        tags: ["creators"],
        summary: "Creators on the platform",
        security,
        response: { 200: CreatorListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async () => listCreators(db),
  );

  app.get(
    "/creators/me/",
    {
      schema: {
        tags: ["creators"],
        summary: "The signed-in user's creator record (404 when not a creator)",
        security,
        response: { 200: CreatorSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => getOwnCreator(db, currentUser(request)),
  );
};
