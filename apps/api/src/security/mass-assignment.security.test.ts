import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiKeys,
  applications,
  creators,
  ledgerAccounts,
  organizationMembers,
  organizations,
  packages,
  paymentMethods,
  prompts,
  subscriptions,
  users,
  workflows,
} from "../db/schema/index.ts";
import type { Caller } from "../test/caller.ts";
import { recordSecurityFigure } from "./report.ts";
import { billingAddress, card, useWorld } from "./world.ts";

/**
 * Bodies that try to set what the caller must not: owners, ids, balances, plans, another app's
 * price or status. Each is refused (400, or 404 for what is not the caller's) and the row it aimed
 * at is byte-for-byte unchanged.
 */
const world = useWorld();
let ownerId: string;
let otherId: string;

beforeAll(async () => {
  ownerId = (await world.owner.api("GET", "/api/auth/profile/")).body.user.id;
  otherId = (await world.other.api("GET", "/api/auth/profile/")).body.user.id;
});
afterAll(async () => {
  recordSecurityFigure("mass_assignment_cases", cases().length);
});

const db = () => world.server.database.db;
const appRow = (slug: string) => db().select().from(applications).where(eq(applications.slug, slug));
const appsOf = (id: string) => db().select().from(applications).where(eq(applications.ownerId, id));
const userRow = (id: string) => db().select().from(users).where(eq(users.id, id));
const creatorRow = (id: string) => db().select().from(creators).where(eq(creators.userId, id));
const walletsOf = (id: string) => db().select().from(ledgerAccounts).where(eq(ledgerAccounts.ownerId, id));
const keysOf = (id: string) => db().select().from(apiKeys).where(eq(apiKeys.userId, id));
const packageRow = (id: string) => db().select().from(packages).where(eq(packages.id, id));

interface Case {
  name: string;
  as: () => Caller;
  method: string;
  url: () => string;
  body: () => unknown;
  status: number;
  /** The rows the request aims at; they must read the same afterwards. */
  rows: () => Promise<unknown>;
}

function cases(): Case[] {
  const owner = () => world.owner;
  const app = () => `/api/app/${world.promptApp.slug}`;
  const otherApp = () => `/api/app/${world.otherApp.slug}`;
  return [
    {
      name: "an app created with owner_id set to another user",
      as: owner,
      method: "POST",
      url: () => "/api/app/",
      body: () => ({ name: "Planted", owner_id: otherId }),
      status: 400,
      rows: () => appsOf(otherId),
    },
    {
      name: "an app created with creator_id",
      as: owner,
      method: "POST",
      url: () => "/api/app/",
      body: () => ({ name: "Planted", creator_id: otherId }),
      status: 400,
      rows: () => appsOf(ownerId),
    },
    {
      name: "an app created with its own id",
      as: owner,
      method: "POST",
      url: () => "/api/app/",
      body: () => ({ name: "Planted", id: world.otherApp.slug }),
      status: 400,
      rows: () => appsOf(ownerId),
    },
    {
      name: "an app created straight to live with a balance",
      as: owner,
      method: "POST",
      url: () => "/api/app/",
      body: () => ({ name: "Planted", status: "live", balance_cents: 1_000_000 }),
      status: 400,
      rows: () => appsOf(ownerId),
    },
    {
      name: "the slug of an app after creation",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/`,
      body: () => ({ slug: "renamed-slug" }),
      status: 400,
      rows: () => appRow(world.promptApp.slug),
    },
    {
      name: "the owner of an app",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/`,
      body: () => ({ owner_id: otherId }),
      status: 400,
      rows: () => appRow(world.promptApp.slug),
    },
    {
      name: "the id of an app",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/`,
      body: () => ({ id: "00000000-0000-0000-0000-000000000000" }),
      status: 400,
      rows: () => appRow(world.promptApp.slug),
    },
    {
      name: "the price of another creator's app",
      as: owner,
      method: "PATCH",
      url: () => `${otherApp()}/`,
      body: () => ({ price_cents: 1 }),
      status: 404,
      rows: () => appRow(world.otherApp.slug),
    },
    {
      name: "the status of another creator's app",
      as: owner,
      method: "PATCH",
      url: () => `${otherApp()}/update_status/`,
      body: () => ({ status: "archived" }),
      status: 404,
      rows: () => appRow(world.otherApp.slug),
    },
    {
      name: "the creator plan",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ creator: { plan: "enterprise" } }),
      status: 400,
      rows: () => creatorRow(ownerId),
    },
    {
      name: "the creator credits",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ creator: { credits: 1_000_000 } }),
      status: 400,
      rows: () => creatorRow(ownerId),
    },
    {
      name: "the creator id",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ creator: { id: otherId } }),
      status: 400,
      rows: () => creatorRow(ownerId),
    },
    {
      name: "the user id",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ user: { id: otherId } }),
      status: 400,
      rows: () => userRow(ownerId),
    },
    {
      name: "the user's email",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ user: { email: world.other.email } }),
      status: 400,
      rows: () => userRow(ownerId),
    },
    {
      name: "the user's active flag",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ user: { is_active: false } }),
      status: 400,
      rows: () => userRow(ownerId),
    },
    {
      name: "a wallet balance through the profile",
      as: owner,
      method: "PATCH",
      url: () => "/api/auth/profile/",
      body: () => ({ balance_cents: 1_000_000 }),
      status: 400,
      rows: () => walletsOf(ownerId),
    },
    {
      name: "a wallet balance on a top-up",
      as: owner,
      method: "POST",
      url: () => "/api/wallet/payment-intents/",
      body: () => ({ amount: 500, balance_cents: 1_000_000 }),
      status: 400,
      rows: () => walletsOf(ownerId),
    },
    {
      name: "the amount when confirming a top-up",
      as: owner,
      method: "POST",
      url: () => "/api/billing/sandbox/confirm/",
      body: () => ({ client_secret: "pi_x_secret_y", card, amount: 1_000_000 }),
      status: 400,
      rows: () => walletsOf(ownerId),
    },
    {
      name: "the user an API key belongs to",
      as: owner,
      method: "POST",
      url: () => "/api/keys/",
      body: () => ({ name: "planted", user_id: otherId }),
      status: 400,
      rows: () => keysOf(otherId),
    },
    {
      name: "the secret of an API key",
      as: owner,
      method: "POST",
      url: () => "/api/keys/",
      body: () => ({ name: "chosen", key: "pm_chosen_by_the_caller_0000000000" }),
      status: 400,
      rows: () => keysOf(ownerId),
    },
    {
      name: "the app a plan belongs to",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/packages/${world.packageId}/`,
      body: () => ({ application_id: world.otherApp.slug }),
      status: 400,
      rows: () => packageRow(world.packageId),
    },
    {
      name: "the price of another creator's plan",
      as: owner,
      method: "PATCH",
      url: () => `${otherApp()}/packages/${world.otherPackageId}/`,
      body: () => ({ price_cents: 100 }),
      status: 404,
      rows: () => packageRow(world.otherPackageId),
    },
    {
      name: "another creator's plan through one's own app",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/packages/${world.otherPackageId}/`,
      body: () => ({ price_cents: 100 }),
      status: 404,
      rows: () => packageRow(world.otherPackageId),
    },
    {
      name: "the status and subscriber of a subscription",
      as: owner,
      method: "PATCH",
      url: () => `${otherApp()}/subscriptions/${world.subscriptionId}/`,
      body: () => ({ cancel_at_period_end: false, status: "active", subscriber_id: otherId, calls_used: 0 }),
      status: 400,
      rows: () => db().select().from(subscriptions).where(eq(subscriptions.id, world.subscriptionId)),
    },
    {
      name: "the user a saved card belongs to",
      as: owner,
      method: "POST",
      url: () => `${otherApp()}/payment-methods/`,
      body: () => ({ billing_address: billingAddress, card, user_id: otherId }),
      status: 400,
      rows: () => db().select().from(paymentMethods).where(eq(paymentMethods.userId, otherId)),
    },
    {
      name: "the app a workflow belongs to",
      as: owner,
      method: "PATCH",
      url: () => `/api/app/${world.workflowApp.slug}/workflow/`,
      body: () => ({ application_id: world.promptApp.id, timeout_seconds: 5 }),
      status: 400,
      rows: () => db().select().from(workflows).where(eq(workflows.id, world.workflowId)),
    },
    {
      name: "the app and active version of a prompt",
      as: owner,
      method: "PATCH",
      url: () => `${app()}/prompt/`,
      body: () => ({ application_id: world.workflowApp.id, active_version_id: "x", temperature: 1 }),
      status: 400,
      rows: () => db().select().from(prompts).where(eq(prompts.id, world.promptId)),
    },
    {
      name: "an organization's creator, kind and issuer at its creation",
      as: owner,
      method: "POST",
      url: () => "/api/organizations/",
      body: () => ({ name: "Planted Org", created_by: otherId, kind: "person", issuer: "https://evil" }),
      status: 400,
      rows: () => db().select().from(organizationMembers).where(eq(organizationMembers.userId, ownerId)),
    },
    {
      name: "an organization's id, creator and member count",
      as: owner,
      method: "PATCH",
      url: () => `/api/organizations/${world.organization.id}/`,
      body: () => ({ tax_id: "X1", id: otherId, created_by: otherId, member_count: 1 }),
      status: 400,
      rows: () => db().select().from(organizations).where(eq(organizations.id, world.organization.id)),
    },
    {
      name: "a member's organization, person and join date",
      as: owner,
      method: "PATCH",
      url: () => `/api/organizations/${world.organization.id}/members/${world.organization.memberId}/`,
      body: () => ({ role: "admin", organization_id: otherId, user_id: otherId, joined_at: "2000-01-01" }),
      status: 400,
      rows: () =>
        db()
          .select()
          .from(organizationMembers)
          .where(eq(organizationMembers.organizationId, world.organization.id)),
    },
    {
      name: "another organization's settings, by a person who is no member",
      as: () => world.other,
      method: "PATCH",
      url: () => `/api/organizations/${world.organization.id}/`,
      body: () => ({ name: "Taken Over" }),
      status: 404,
      rows: () => userRow(world.organization.id),
    },
  ];
}

describe("mass assignment is refused and changes nothing", () => {
  for (const [index, { name }] of cases().entries()) {
    it(`refuses ${name}`, async () => {
      const attempt = cases()[index] as Case;
      const before = await attempt.rows();
      const answer = await attempt.as().api(attempt.method, attempt.url(), { body: attempt.body() });
      expect(answer.status, JSON.stringify(answer.body)).toBe(attempt.status);
      expect(await attempt.rows()).toEqual(before);
    });
  }
});
