import { and, eq, isNotNull } from "drizzle-orm";
import { expect, it } from "vitest";
import { invocations, memberSpend } from "../../db/schema/index.ts";
import { callerAt, createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { actingFor, insertOrganization, setMember } from "../../test/organizations.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useTestServers } from "../../test/use-test-server.ts";

// A member's monthly budget (decision 084) held across two API processes on one PostgreSQL: the
// reservation is one conditional statement, so calls through both at once cannot pass it together.

const { servers, urls } = useTestServers();
const PRICE = 5;

it("lets exactly 3 of 10 calls at once, through two processes, past a budget of 3 calls", async () => {
  expect(urls).toHaveLength(2);
  const [first, second] = urls as [string, string];
  const db = servers[0]?.database.db;
  if (!db) throw new Error("no server");
  const creator = await createCaller(first, "Budget Seller");
  const owner = await createCaller(first, "Budget Org Owner");
  const developer = await createCaller(first, "Budget Developer");
  const { slug } = await createLiveApp(creator, { price_cents: PRICE }, { model: "sandbox" });
  const org = await insertOrganization(db, owner, "Two Process Co");
  const userId = await setMember(db, org, developer, "developer", 3 * PRICE);
  await fundWallet(actingFor(owner, org), 1_000);
  const made = await actingFor(developer, org).api("POST", "/api/keys/", { body: { name: "two" } });
  expect(made.status).toBe(201);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => {
      const url = i % 2 === 0 ? first : second;
      const person = actingFor(callerAt(url, developer), org);
      return person.api("POST", `/api/app/${slug}/completion-messages`, {
        body: { inputs: { query: `call ${i}` }, response_mode: "blocking" },
        ...(i % 4 < 2 ? { auth: made.body.key as string } : {}),
      });
    }),
  );
  expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
  expect(answers.filter((answer) => answer.status === 402).map((answer) => answer.body.code)).toEqual(
    Array(7).fill("member_budget_reached"),
  );
  const charged = await db
    .select({ caller: invocations.callerUserId, charged: invocations.chargedCents })
    .from(invocations)
    .where(and(eq(invocations.memberId, userId), isNotNull(invocations.holdId)));
  expect(charged).toEqual(Array(3).fill({ caller: org, charged: PRICE }));
  const [spend] = await db.select().from(memberSpend).where(eq(memberSpend.userId, userId));
  expect(Number(spend?.spentMicros)).toBe(3 * PRICE * 10_000);
  await expectReconciled(db);
});
