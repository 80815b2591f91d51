import {
  AuditListSchema,
  AuditQuerySchema,
  CreateOrganizationSchema,
  MemberListSchema,
  MemberSchema,
  OrganizationListSchema,
  OrganizationSchema,
  UpdateMemberSchema,
  UpdateOrganizationSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { memberOf } from "./member-access.ts";
import { listMembers, removeMember, updateMember } from "./members.ts";
import {
  createOrganization,
  getOrganization,
  listAuditEvents,
  listOrganizations,
  updateOrganization,
} from "./organizations.service.ts";

const errors = errorResponses(400, 401, 403, 404, 409);
const security = [{ bearerAuth: [] }];
const tags = ["organizations"];
// A malformed id is refused 400 by name, as every id of ours (issue 37): it reveals nothing. A
// well-formed one is 404 for anyone not a member, whether or not the organization exists.
const OrganizationParams = z.object({ id: UuidSchema });
const MemberParams = OrganizationParams.extend({ user_id: UuidSchema });

/**
 * Organizations and their members (issue 43, decision 084), as the signed-in person's own routes:
 * the organization comes from the path, and the person's membership there decides (never the
 * Promptmint-Organization header, which acts for an organization on the account routes).
 */
export const organizationsRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  const onRequest = guards.requireUser;

  app.get(
    "/organizations/",
    {
      schema: {
        tags,
        summary: "Your organizations, with your role in each",
        security,
        response: { 200: OrganizationListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => listOrganizations(db, currentUser(request)),
  );
  app.post(
    "/organizations/",
    {
      schema: {
        tags,
        summary: "Create an organization (you are its owner): an account with its own wallet, keys and apps",
        security,
        body: CreateOrganizationSchema,
        response: { 201: OrganizationSchema, ...errors },
      },
      onRequest,
    },
    async (request, reply) =>
      reply.status(201).send(await createOrganization(db, currentUser(request), request.body)),
  );
  app.get(
    "/organizations/:id/",
    {
      schema: {
        tags,
        summary: "An organization you are a member of",
        security,
        params: OrganizationParams,
        response: { 200: OrganizationSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const person = currentUser(request);
      await memberOf(db, request.params.id, person);
      return getOrganization(db, request.params.id, person);
    },
  );
  app.patch(
    "/organizations/:id/",
    {
      schema: {
        tags,
        summary: "Change its name or billing details (owner, admin)",
        security,
        params: OrganizationParams,
        body: UpdateOrganizationSchema,
        response: { 200: OrganizationSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const person = currentUser(request);
      await memberOf(db, request.params.id, person, "manage");
      return updateOrganization(db, request.params.id, person, request.body);
    },
  );

  app.get(
    "/organizations/:id/members/",
    {
      schema: {
        tags,
        summary: "Its members: role, monthly budget and what they spent this month",
        security,
        params: OrganizationParams,
        response: { 200: MemberListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const membership = await memberOf(db, request.params.id, currentUser(request));
      return listMembers(db, membership.organizationId);
    },
  );
  app.patch(
    "/organizations/:id/members/:user_id/",
    {
      schema: {
        tags,
        summary: "Change a member's role (owner, admin) or monthly budget (owner, admin, billing)",
        security,
        params: MemberParams,
        body: UpdateMemberSchema,
        response: { 200: MemberSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const person = currentUser(request);
      const membership = await memberOf(db, request.params.id, person);
      return updateMember(db, { membership, person }, request.params.user_id, request.body);
    },
  );
  app.delete(
    "/organizations/:id/members/:user_id/",
    {
      schema: {
        tags,
        summary: "Remove a member (owner, admin) or leave; the keys they made for it are revoked",
        security,
        params: MemberParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest,
    },
    async (request, reply) => {
      const person = currentUser(request);
      const membership = await memberOf(db, request.params.id, person);
      await removeMember(db, { membership, person }, request.params.user_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/organizations/:id/audit/",
    {
      schema: {
        tags,
        summary: "Its audit log, newest first: who did what, when (owner, admin)",
        security,
        params: OrganizationParams,
        querystring: AuditQuerySchema,
        response: { 200: AuditListSchema, ...errors },
      },
      onRequest,
    },
    async (request) => {
      const membership = await memberOf(db, request.params.id, currentUser(request), "manage");
      return listAuditEvents(db, membership.organizationId, request.query.page);
    },
  );
};
