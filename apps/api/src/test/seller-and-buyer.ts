import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../db/client.ts";
import { accountFor } from "../modules/billing/postings.ts";
import { createCaller, fundWallet } from "./caller.ts";

/** A creator with a public paid app and a consumer with a funded wallet, as the recorder's tests need them. */
export interface SellerAndBuyer {
  appId: string;
  creatorId: string;
  consumerId: string;
  /** The consumer's wallet and held accounts, which a hold moves money between. */
  accounts: { wallet: string; held: string };
}

/**
 * Signs up a creator and a consumer on the server, funds the consumer's wallet with `fundsCents`
 * and creates the creator's app named `name` at `priceCents`: what tests that record calls
 * directly (below the gateway) start from.
 */
export async function sellerAndBuyer(
  server: { baseUrl: string },
  db: Database,
  options: { name: string; priceCents: number; fundsCents: number },
): Promise<SellerAndBuyer> {
  const creator = await createCaller(server.baseUrl, `${options.name} Seller`);
  const consumer = await createCaller(server.baseUrl, `${options.name} Buyer`);
  await fundWallet(consumer, options.fundsCents);
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: options.name,
      interaction_mode: "completion",
      visibility: "public",
      price_cents: options.priceCents,
    },
  });
  const users = await queryRows<{ id: string; email: string }>(
    db,
    sql`select id, email from users where email in (${creator.email}, ${consumer.email})`,
  );
  const consumerId = users.find((u) => u.email === consumer.email)?.id ?? "";
  return {
    appId: app.id,
    creatorId: users.find((u) => u.email === creator.email)?.id ?? "",
    consumerId,
    accounts: {
      wallet: await accountFor(db, "wallet", consumerId),
      held: await accountFor(db, "held", consumerId),
    },
  };
}
