import { Mppx, stripe } from "mppx/client";
import { afterAll, beforeAll } from "vitest";
import type { Database } from "../db/client.ts";
import { walletBalances } from "../modules/billing/balances.ts";
import { type MppStripeDouble, startMppStripeDouble } from "./mpp-stripe-double.ts";
import { useCaller, useVendorServer } from "./use-test-server.ts";
import { startX402Facilitator, type X402Facilitator } from "./x402-facilitator.ts";

/** The Stripe secret key of the rails' loopback Stripe (for a rail a test builds itself). */
export const AGENT_RAILS_STRIPE_KEY = "sk_test_agent_rails_double";

/**
 * A test server with both agent rails on (issue 40, decisions 070 and 071): x402 through the
 * loopback facilitator and MPP through the loopback Stripe, both started before the server and
 * stopped after the file; and one public app at `priceCents` on the vendor's model.
 */
export function useAgentRailsServer(options: {
  priceCents: number;
  mode: "completion" | "chat";
  name: string;
}) {
  const stripeKey = AGENT_RAILS_STRIPE_KEY;
  const rails = {} as { double: MppStripeDouble; facilitator: X402Facilitator };
  const ready = (async () => {
    rails.double = await startMppStripeDouble(stripeKey);
    rails.facilitator = await startX402Facilitator();
  })();
  beforeAll(() => ready);
  afterAll(async () => {
    await rails.double?.close();
    await rails.facilitator?.stop?.();
  });
  const { server, vendor } = useVendorServer(() => ({
    ...rails.facilitator.env(),
    MPP_SECRET_KEY: "agent-rails-challenge-key-0123456789abcdef",
    MPP_STRIPE_SECRET_KEY: stripeKey,
    MPP_STRIPE_API_URL: rails.double.url,
  }));
  const creator = useCaller(server, `${options.name} Seller`);
  const app = { slug: "" };
  beforeAll(async () => {
    app.slug = await createPaidApp(creator, options);
  });
  return {
    server,
    vendor,
    creator,
    app,
    get double() {
      return rails.double;
    },
    get facilitator() {
      return rails.facilitator;
    },
  };
}

/** A live public prompt app at a price, on the vendor's model. */
async function createPaidApp(
  creator: ReturnType<typeof useCaller>,
  options: { priceCents: number; mode: "completion" | "chat"; name: string },
): Promise<string> {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: options.name,
      description: "paid by agents",
      interaction_mode: options.mode,
      visibility: "public",
      price_cents: options.priceCents,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug;
}

/** A payer of MPP with the real client: its stripe method has a token granted at the double. */
export function mppAgent(double: MppStripeDouble, paymentMethod = "pm_card_visa") {
  return Mppx.create({
    polyfill: false,
    methods: [mppStripeCharge(double, paymentMethod)],
  });
}

/** mppx's stripe `charge` method, its tokens granted by the double. */
export function mppStripeCharge(double: MppStripeDouble, paymentMethod = "pm_card_visa") {
  return stripe.charge({
    paymentMethod,
    createToken: ({ amount, currency, expiresAt, paymentMethod: method }) =>
      double.grantToken({ paymentMethod: method, maxAmount: Number(amount), currency, expiresAt }),
  });
}

/**
 * An account-less payer's unspent balance at this moment: its wallet and what its open leases still
 * hold unspent (billing/balances.ts `walletBalances`: calls paid from an open lease count as spent).
 */
export async function agentBalanceOf(db: Database, payerUserId: string): Promise<number> {
  const balances = await walletBalances(db, payerUserId);
  return balances.wallet + balances.held;
}

/**
 * A stream that must flow as it comes (decision 070): the vendor sends one word and waits; `arrived`
 * (called when the first content reached the client) lets it finish. Content held back until the
 * end never arrives first, so the guard opens it after `guardMs` and `heldBack()` says so.
 */
export function firstWordGate(guardMs = 15_000) {
  let open!: () => void;
  let byGuard = false;
  const rest = new Promise<void>((resolve) => {
    open = resolve;
  });
  const guard = setTimeout(() => {
    byGuard = true;
    open();
  }, guardMs);
  return {
    rest,
    arrived() {
      clearTimeout(guard);
      open();
    },
    heldBack: () => byGuard,
  };
}
