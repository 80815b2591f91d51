import {
  CreateInvitationSchema,
  InvitationListSchema,
  InvitationPreviewSchema,
  InvitationSchema,
  OrganizationSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import type { Mailer } from "../../lib/mailer.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import {
  acceptInvitation,
  createInvitation,
  listInvitations,
  previewInvitation,
  revokeInvitation,
} from "./invitations.ts";
import { memberOf } from "./member-access.ts";
import { getOrganization } from "./organizations.service.ts";

const security = [{ bearerAuth: [] }];
const tags = ["organizations"];
const OrganizationParams = z.object({ id: UuidSchema });
const InvitationParams = OrganizationParams.extend({ invitation_id: UuidSchema });
const TokenParams = z.object({ token: z.string().max(200) });

/**
 * Invitations (decision 084): those who manage an organization invite an address, which is mailed
 * a link (/invitations/{token} in the web app); the person signed in with that address accepts it.
 */
export const invitationsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  mailer: Mailer | undefined;
  publicUrl: string;
}> = async (app, { db, guards, mailer, publicUrl }) => {
  const onRequest = guards.requireUser;

  app.get(
    "/organizations/:id/invitations/",
    {
      schema: {
        tags,
        summary: "Its invitations, newest first, with their status (owner, admin)",
        security,
        params: OrganizationParams,
        response: { 200: InvitationListSchema, ...errorResponses(400, 401, 403, 404) },
      },
      onRequest,
    },
    async (request) => {
      const membership = await memberOf(db, request.params.id, currentUser(request), "manage");
      return listInvitations(db, membership.organizationId);
    },
  );
  app.post(
    "/organizations/:id/invitations/",
    {
      schema: {
        tags,
        summary: "Invite an address with a role; it is mailed a link valid 7 days (owner, admin)",
        security,
        params: OrganizationParams,
        body: CreateInvitationSchema,
        response: { 201: InvitationSchema, ...errorResponses(400, 401, 403, 404, 409, 502, 503) },
      },
      onRequest,
    },
    async (request, reply) => {
      const person = currentUser(request);
      const membership = await memberOf(db, request.params.id, person, "manage");
      const invitation = await createInvitation(
        { db, mailer, publicUrl },
        { membership, person },
        request.body,
      );
      return reply.status(201).send(invitation);
    },
  );
  app.delete(
    "/organizations/:id/invitations/:invitation_id/",
    {
      schema: {
        tags,
        summary: "Revoke a pending invitation: its link stops working (owner, admin)",
        security,
        params: InvitationParams,
        response: { 204: z.null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
      onRequest,
    },
    async (request, reply) => {
      const person = currentUser(request);
      const membership = await memberOf(db, request.params.id, person, "manage");
      await revokeInvitation(db, { membership, person }, request.params.invitation_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/invitations/:token/",
    {
      schema: {
        tags,
        summary: "What an invitation's link offers: organization, role, inviter, and whether it is yours",
        security,
        params: TokenParams,
        response: { 200: InvitationPreviewSchema, ...errorResponses(400, 401, 404) },
      },
      onRequest,
    },
    async (request) => previewInvitation(db, request.params.token, currentUser(request)),
  );
  app.post(
    "/invitations/:token/accept/",
    {
      schema: {
        tags,
        summary: "Accept an invitation mailed to your address: you join with its role",
        security,
        params: TokenParams,
        response: { 200: OrganizationSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
      },
      onRequest,
    },
    async (request) => {
      const person = currentUser(request);
      return getOrganization(db, await acceptInvitation(db, request.params.token, person), person);
    },
  );
};
