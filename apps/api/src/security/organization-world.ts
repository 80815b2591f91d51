import type { OrganizationRole } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import { organizationMembers } from "../db/schema/index.ts";
import { type Caller, createCaller } from "../test/caller.ts";
import { insertOrganization, setMember, userIdOf } from "../test/organizations.ts";
import type { World } from "./world.ts";

export const organizationRoles = [
  "owner",
  "admin",
  "developer",
  "billing",
  "viewer",
] as const satisfies readonly OrganizationRole[];

/**
 * The organization callers of the security suite (issue 43, decision 084): an organization the
 * world's owner made, with a member of each role, a removed member, a person who owns another
 * organization, and a key its developer made. None of them owns the world's apps: acting for the
 * organization, those are another account's. Each acts with `Promptmint-Organization: <id>`.
 */
export interface OrganizationWorld {
  id: string;
  members: Record<OrganizationRole, Caller>;
  /** Was a developer; their membership row is gone. */
  removed: Caller;
  /** Owner of another organization, no member of this one. */
  outsider: Caller;
  outsiderOrganizationId: string;
  /** The organization's key, made by its developer acting for it. */
  key: { id: string; key: string };
  /** The people's own account ids (a person's id is no organization's). */
  personIds: { owner: string; other: string; developer: string };
}

/**
 * People signed up through the real issuer, as the world signs up its own, with verified addresses
 * (so what their own routes answer does not hang on a verification mail's minute).
 */
export async function addOrganization(world: World): Promise<OrganizationWorld> {
  const { db } = world.server.database;
  const person = (name: string) => createCaller(world.server.baseUrl, name, { verified: true });
  const id = await insertOrganization(db, world.owner, "Matrix Org");
  const members = {} as Record<OrganizationRole, Caller>;
  for (const role of organizationRoles) {
    members[role] = await person(`Org ${role}`);
    await setMember(db, id, members[role], role);
  }
  const removed = await person("Org removed");
  const removedId = await setMember(db, id, removed, "developer");
  await db
    .delete(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, id), eq(organizationMembers.userId, removedId)));
  const outsider = await person("Org outsider");
  const outsiderOrganizationId = await insertOrganization(db, outsider, "Other Org");

  const made = await members.developer.api("POST", "/api/keys/", {
    body: { name: "organization" },
    headers: { "promptmint-organization": id },
  });
  if (made.status !== 201) throw new Error(`organization key: ${made.status} ${JSON.stringify(made.body)}`);
  return {
    id,
    members,
    removed,
    outsider,
    outsiderOrganizationId,
    key: made.body as { id: string; key: string },
    personIds: {
      owner: await userIdOf(db, world.owner),
      other: await userIdOf(db, world.other),
      developer: await userIdOf(db, members.developer),
    },
  };
}
