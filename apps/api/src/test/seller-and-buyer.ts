import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../db/client.ts";
import { cachedAccountFor } from "../modules/billing/postings.ts";
import type { InvocationRecord } from "../modules/gateway/invocations.service.ts";
import { createCaller, fundWallet } from "./caller.ts";
import type { TestServer } from "./server.ts";

/**
 * For tests that write calls straight to the database: a seller with a paid completion app (not
 * live: nobody calls it over HTTP) and a buyer with `funds` cents, by their ids, with the buyer's
 * wallet and held accounts.
 */
export async function sellerAndBuyer(
  server: TestServer,
  options: { seller: string; buyer: string; app: string; priceCents: number; funds: number },
) {
  const db = server.database.db;
  const creator = await createCaller(server.baseUrl, options.seller);
  const consumer = await createCaller(server.baseUrl, options.buyer);
  await fundWallet(consumer, options.funds);
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: options.app,
      interaction_mode: "completion",
      visibility: "public",
      price_cents: options.priceCents,
    },
  });
  const users = await queryRows<{ id: string; email: string }>(
    db,
    sql`select id, email from users where email in (${creator.email}, ${consumer.email})`,
  );
  const creatorId = users.find((u) => u.email === creator.email)?.id ?? "";
  const consumerId = users.find((u) => u.email === consumer.email)?.id ?? "";
  return {
    db,
    appId: app.id as string,
    creatorId,
    consumerId,
    accounts: {
      wallet: await cachedAccountFor(db, "wallet", consumerId),
      held: await cachedAccountFor(db, "held", consumerId),
    },
  };
}

/** A successful call of the buyer's to the seller's app at `priceCents`, as the gateway records it. */
export function paidCallRecord(
  ids: { appId: string; consumerId: string },
  priceCents: number,
  overrides: Partial<InvocationRecord> = {},
): InvocationRecord {
  return {
    id: randomUUID(),
    applicationId: ids.appId,
    callerUserId: ids.consumerId,
    apiKeyId: null,
    endUser: "test-user",
    mode: "completion",
    model: "gpt-4o-mini",
    status: "success",
    latencyMs: 12,
    inputTokens: 3,
    outputTokens: 5,
    chargedCents: priceCents,
    ...overrides,
  };
}
