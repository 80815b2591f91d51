/**
 * Decision 037, a quick measurement (not a test): what a wallet-paid call waits for between the
 * upstream's answer and its own answer, on PostgreSQL (TEST_DATABASE_URL, a scratch database).
 * Interleaved, one call at a time: the one-step record (`recordCharged`, pm_record_batch_v8)
 * against the completion (`submitCompletion`) of a call whose intent ran earlier (as it does while
 * the upstream works). Also times the intent and the finish, which are off the critical path.
 * Usage: TEST_DB=postgres TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
 *   node bench/gateway/record-step.ts [calls=400]
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../../apps/api/src/db/client.ts";
import { takeCallPayment } from "../../apps/api/src/modules/billing/holds.ts";
import { cachedAccountFor } from "../../apps/api/src/modules/billing/postings.ts";
import { reconcile } from "../../apps/api/src/modules/billing/reconcile.ts";
import {
  submitCompletion,
  submitFinish,
  submitIntent,
} from "../../apps/api/src/modules/gateway/call-intent.ts";
import { recordCharged } from "../../apps/api/src/modules/gateway/recorder.ts";
import { createCaller, fundWallet } from "../../apps/api/src/test/caller.ts";
import { createTestDatabase } from "../../apps/api/src/test/database.ts";
import { startTestServer } from "../../apps/api/src/test/server.ts";

const CALLS = Number(process.argv[2] ?? 400);
const PRICE = 1;
process.env.TEST_DB ??= "postgres";
const testDb = await createTestDatabase();
const server = await startTestServer(testDb);
const db = server.database.db;
try {
  const creator = await createCaller(server.baseUrl, "Step Seller");
  const consumer = await createCaller(server.baseUrl, "Step Buyer");
  await fundWallet(consumer, 10 * CALLS * PRICE);
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Stepped", interaction_mode: "completion", visibility: "public", price_cents: PRICE },
  });
  const ids = await queryRows<{ id: string; email: string }>(
    db,
    sql`select id, email from users where email in (${creator.email}, ${consumer.email})`,
  );
  const creatorId = ids.find((u) => u.email === creator.email)?.id ?? "";
  const consumerId = ids.find((u) => u.email === consumer.email)?.id ?? "";
  const accounts = {
    wallet: await cachedAccountFor(db, "wallet", consumerId),
    held: await cachedAccountFor(db, "held", consumerId),
  };
  const payment = await takeCallPayment(db, {
    payerId: consumerId,
    applicationId: app.id,
    creatorId,
    amountCents: PRICE,
    leaseCents: PRICE * (2 * CALLS + 100),
    ttlSeconds: 3600,
    topUpUrl: "http://example.test/wallet",
    tryIncluded: false,
    accounts,
  });
  const holdId = payment.holdId ?? "";
  const times = {
    record: [] as number[],
    completion: [] as number[],
    intent: [] as number[],
    finish: [] as number[],
  };
  const ms = async <T>(list: number[], work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await work();
    list.push(performance.now() - t);
    return out;
  };
  for (let i = 0; i < CALLS + 50; i++) {
    const warm = i < 50;
    const sink = {
      record: [] as number[],
      completion: [] as number[],
      intent: [] as number[],
      finish: [] as number[],
    };
    const into = warm ? sink : times;
    // The one-step record, as before.
    const recorded = await ms(into.record, () =>
      recordCharged(
        db,
        {
          id: randomUUID(),
          applicationId: app.id,
          callerUserId: consumerId,
          endUser: "step",
          mode: "completion",
          model: "gpt-4o-mini",
          status: "success",
          latencyMs: 200,
          inputTokens: 3,
          outputTokens: 5,
          chargedCents: PRICE,
        },
        { holdId, amountCents: PRICE, feePercent: 10 },
      ),
    );
    if (recorded.outcome !== "hold") throw new Error(`record: ${recorded.outcome}`);
    // The three steps; only the completion is on the critical path.
    const id = randomUUID();
    const intent = await ms(into.intent, () =>
      submitIntent(db, {
        id,
        applicationId: app.id,
        callerUserId: consumerId,
        endUser: "step",
        mode: "completion",
        model: "gpt-4o-mini",
        voidAfter: new Date(Date.now() + 600_000),
        holdId,
        amountCents: PRICE,
        feePercent: 10,
      }),
    );
    if (intent.outcome !== "hold" || !intent.createdAt) throw new Error(`intent: ${intent.outcome}`);
    const createdAt = intent.createdAt;
    const cents = await ms(into.completion, () =>
      submitCompletion(db, {
        id,
        createdAt,
        chargedCents: PRICE,
        feePercent: 10,
        model: "gpt-4o-mini",
        latencyMs: 200,
        inputTokens: 3,
        outputTokens: 5,
      }),
    );
    if (cents !== PRICE) throw new Error("completion did not charge");
    await ms(into.finish, () => submitFinish(db, { id, createdAt, modelCostMicros: 0 }));
  }
  const q = (list: number[], p: number) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  };
  for (const [name, list] of Object.entries(times))
    console.log(
      `${name.padEnd(11)} p50 ${q(list, 0.5).toFixed(3)} ms  p99 ${q(list, 0.99).toFixed(3)} ms  (${list.length})`,
    );
  const report = await reconcile(db);
  console.log(`reconcile ok: ${report.ok}`);
} finally {
  await server.stop();
  await testDb.destroy();
}
