import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DatabaseHandle, queryRows } from "../../../db/client.ts";
import { createTestDatabase, type TestDatabase } from "../../../test/database.ts";
import { centsToMicros, feeMicros } from "../money.ts";
import { effectivePriceCents } from "../price-changes.ts";
import { chargedCentsSql, currentPriceSql, feeMicrosSql, microsSql, modelCostDeductedSql } from "./rules.ts";

// Each money rule is one SQL fragment (rules.ts) that every statement uses, and one TypeScript
// figure; these properties run the fragments on the database against the TypeScript for many
// random inputs, so the two cannot drift apart unnoticed.

let testDb: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
});

afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

const RUNS = 200;
const cents = fc.integer({ min: 1, max: 10_000_000 });
/** Fee percentages as the config allows them: 0 to 100 with up to two decimals. */
const feePercent = fc.integer({ min: 0, max: 10_000 }).map((hundredths) => hundredths / 100);

it("the current price in SQL is effectivePriceCents at the statement's moment", async () => {
  await fc.assert(
    fc.asyncProperty(
      cents,
      // An announced increase (price and moment, set together) from a minute before to a minute
      // after now, or none.
      fc.option(fc.tuple(cents, fc.integer({ min: -60_000, max: 60_000 }))),
      async (priceCents, pending) => {
        const pendingPriceCents = pending?.[0] ?? null;
        const pendingPriceAt = pending ? new Date(Date.now() + pending[1]) : null;
        const [row] = await queryRows<{ price: string; now: string }>(
          handle.db,
          sql`select ${sql.raw(currentPriceSql("a"))}::text as price, now()::text as now
              from (select ${priceCents}::bigint as price_cents, ${pendingPriceCents}::bigint as pending_price_cents,
                           ${pendingPriceAt?.toISOString() ?? null}::timestamptz as pending_price_at) a`,
        );
        const at = new Date(row?.now ?? "");
        expect(Number(row?.price)).toBe(
          effectivePriceCents({ priceCents, pendingPriceCents, pendingPriceAt }, at),
        );
      },
    ),
    { numRuns: RUNS },
  );
});

it("the charge, its fee and the model cost deducted in SQL are the TypeScript figures", async () => {
  await fc.assert(
    fc.asyncProperty(
      cents,
      cents,
      feePercent,
      fc.integer({ min: 0, max: 2_000_000_000 }),
      async (startedAt, now, percent, modelCost) => {
        const charged = `${chargedCentsSql("v.started", "v.now")}`;
        const [row] = await queryRows<{ charged: string; micros: string; fee: string; deducted: string }>(
          handle.db,
          sql`select c.charged::text as charged, ${sql.raw(microsSql("c.charged"))}::text as micros,
                ${sql.raw(feeMicrosSql(microsSql("c.charged"), "c.fee_percent"))}::text as fee,
                ${sql.raw(modelCostDeductedSql("c.model_cost", microsSql("c.charged"), feeMicrosSql(microsSql("c.charged"), "c.fee_percent")))}::text as deducted
              from (select ${sql.raw(charged)} as charged, v.fee_percent, v.model_cost
                    from (select ${startedAt}::bigint as started, ${now}::bigint as now,
                                 ${percent}::numeric as fee_percent, ${modelCost}::bigint as model_cost) v) c`,
        );
        const chargedCents = Math.min(startedAt, now);
        const micros = centsToMicros(chargedCents);
        const fee = feeMicros(micros, percent);
        expect(row).toEqual({
          charged: String(chargedCents),
          micros: String(micros),
          fee: String(fee),
          deducted: String(Math.min(modelCost, micros - fee)),
        });
      },
    ),
    { numRuns: RUNS },
  );
});
