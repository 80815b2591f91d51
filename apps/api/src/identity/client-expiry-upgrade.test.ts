import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { oidcPayloads } from "../db/schema/index.ts";
import { useDatabaseBefore } from "../test/upgrade-database.ts";

// Migration 0032 (decision 042) on a database the previous version wrote: registered clients were
// stored without an expiry, used or not.

const DAY = 24 * 60 * 60 * 1000;
const upgraded = useDatabaseBefore("0032_oidc_client_expiry");

it("gives a used registered client 30 days and an unused one a day; other rows are untouched", async () => {
  const client = (id: string) => ({ model: "Client", id, payload: { client_id: id, client_name: id } });
  await upgraded.db.insert(oidcPayloads).values([
    client("used-client"),
    client("unused-client"),
    {
      model: "Grant",
      id: "grant-1",
      payload: { clientId: "used-client", accountId: "a1" },
      grantId: "grant-1",
    },
    { model: "Session", id: "session-1", payload: { accountId: "a1" } },
  ]);

  await upgraded.upgrade();

  const expiry = async (id: string) =>
    (await upgraded.db.select().from(oidcPayloads).where(eq(oidcPayloads.id, id)))[0]?.expiresAt?.getTime();
  expect((await expiry("used-client")) ?? 0).toBeGreaterThan(Date.now() + 29 * DAY);
  const unused = (await expiry("unused-client")) ?? 0;
  expect(unused).toBeGreaterThan(Date.now() + 0.9 * DAY);
  expect(unused).toBeLessThan(Date.now() + 1.1 * DAY);
  expect(await expiry("grant-1")).toBeUndefined();
  expect(await expiry("session-1")).toBeUndefined();
});
