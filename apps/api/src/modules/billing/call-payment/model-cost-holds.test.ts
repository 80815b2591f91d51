import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Database } from "../../../db/client.ts";
import { modelCostHolds } from "../../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../../test/caller.ts";
import { createLiveApp } from "../../../test/live-app.ts";
import { useTestServer } from "../../../test/use-test-server.ts";
import { requestWorstCaseMicros } from "../../models/worst-case.ts";
import { walletBalances } from "../balances.ts";
import { debtOf } from "../debts.ts";
import { accountFor, postTransaction } from "../postings.ts";
import { reconcile } from "../reconcile.ts";
import {
  holdModelCost,
  releaseModelCostHold,
  spendModelCostHold,
  sweepExpiredModelCostHolds,
} from "./model-cost-holds.ts";

// A call's model cost hold (decision 062) through its failure cases: a crash before the record,
// a record after the sweeper released it, a vendor billing beyond the worst case.
const server = useTestServer();

async function fundedCreator(name: string, cents: number) {
  const creator = await createCaller(server.baseUrl, name);
  await fundWallet(creator, cents);
  const creatorId = (await creator.api("GET", "/api/auth/profile/")).body.user.id as string;
  const { id: applicationId } = await createLiveApp(creator, { price_cents: 100 }, { model: "gpt-4o-mini" });
  return { creatorId, applicationId };
}

const hold = (creatorId: string, applicationId: string, amountMicros: number, ttlSeconds = 60) => {
  const callId = randomUUID();
  return holdModelCost(server.database.db, {
    callId,
    creatorId,
    applicationId,
    amountMicros,
    ttlSeconds,
    topUpUrl: "http://x/wallet",
  }).then(() => callId);
};

describe("a model cost hold", () => {
  it("left by a crash (no record) is released whole by the sweeper once it expires", async () => {
    const { creatorId, applicationId } = await fundedCreator("Crashed Owner", 100);
    const callId = await hold(creatorId, applicationId, 400_000);
    expect(await walletBalances(server.database.db, creatorId)).toMatchObject({
      wallet: 600_000,
      held: 400_000,
    });
    // Not before it expires: the call might still be running.
    expect(await sweepExpiredModelCostHolds(server.database.db)).toBe(0);
    expect(await sweepExpiredModelCostHolds(server.database.db, new Date(Date.now() + 3_600_000))).toBe(1);
    const [row] = await server.database.db.select().from(modelCostHolds).where(eq(modelCostHolds.id, callId));
    expect(row).toMatchObject({ status: "released", spentMicros: 0, overrunMicros: 0 });
    expect(await walletBalances(server.database.db, creatorId)).toMatchObject({ wallet: 1_000_000, held: 0 });
    // Resolved once: a second release or sweep does nothing.
    expect(await releaseModelCostHold(server.database.db, callId)).toBe(false);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it("a 402 naming the top-up page when the wallet cannot cover it, and nothing written", async () => {
    const { creatorId, applicationId } = await fundedCreator("Short Owner", 100);
    const refused = await hold(creatorId, applicationId, 1_000_001).catch((error) => error);
    expect(refused).toMatchObject({ code: "payment_required" });
    expect(refused.remedy).toMatchObject({ top_up_url: "http://x/wallet", balance_micros: 1_000_000 });
    expect(await walletBalances(server.database.db, creatorId)).toMatchObject({ wallet: 1_000_000, held: 0 });
  });

  it("spent after the sweeper released it takes the cost from the wallet as it is; beyond it, the platform's overrun, never debt", async () => {
    const { creatorId, applicationId } = await fundedCreator("Late Owner", 100);
    const callId = await hold(creatorId, applicationId, 300_000);
    await sweepExpiredModelCostHolds(server.database.db, new Date(Date.now() + 3_600_000));
    // A record arriving late, billing more than the whole wallet (a vendor over-reporting).
    await server.database.db.transaction((tx) =>
      spendModelCostHold(tx as unknown as Database, {
        id: callId,
        invocationCreatedAt: new Date(),
        costMicros: 1_200_000,
      }),
    );
    const [row] = await server.database.db.select().from(modelCostHolds).where(eq(modelCostHolds.id, callId));
    expect(row).toMatchObject({ spentMicros: 1_000_000, overrunMicros: 200_000 });
    expect(await walletBalances(server.database.db, creatorId)).toMatchObject({ wallet: 0, held: 0 });
    expect(await debtOf(server.database.db, creatorId)).toBe(0);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });
});

describe("a model cost hold of a creator in debt", () => {
  it("gives its rest back to the debt first, never to the wallet beside it (decision 028)", async () => {
    const { creatorId, applicationId } = await fundedCreator("Indebted Owner", 100);
    const callId = await hold(creatorId, applicationId, 400_000);
    // While the hold is out, a chargeback takes $9 of which the wallet has $6: $3 of debt.
    const db = server.database.db;
    await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await postTransaction(t, {
        kind: "reversal",
        reference: `test-chargeback:${callId}`,
        description: "A disputed payment (test)",
        entries: [
          { accountId: await accountFor(t, "wallet", creatorId), amountMicros: -600_000 },
          { accountId: await accountFor(t, "debt", creatorId), amountMicros: -300_000 },
          { accountId: await accountFor(t, "platform_fee", null), amountMicros: 900_000 },
        ],
      });
    });
    expect(await debtOf(db, creatorId)).toBe(300_000);
    expect(await releaseModelCostHold(db, callId)).toBe(true);
    expect(await debtOf(db, creatorId)).toBe(0);
    expect(await walletBalances(db, creatorId)).toMatchObject({ wallet: 100_000, held: 0 });
  });
});

describe("a call's worst case", () => {
  it("bounds input by the request's own text with a margin, and output by max_tokens", () => {
    const request = {
      model: "gpt-4",
      system: "You are terse.",
      messages: [{ role: "user" as const, content: "Say hello to the world." }],
      maxTokens: 1000,
    };
    // gpt-4: $30 per million input tokens, $60 per million output tokens.
    const micros = requestWorstCaseMicros(request);
    expect(micros).toBeGreaterThanOrEqual(1000 * 60 + 10 * 30);
    // A longer input costs more; max_tokens is the output's bound.
    expect(
      requestWorstCaseMicros({ ...request, messages: [{ role: "user", content: "word ".repeat(500) }] }),
    ).toBeGreaterThan(micros + 500 * 30);
    expect(requestWorstCaseMicros({ ...request, maxTokens: 2000 })).toBe(micros + 1000 * 60);
  });
});
