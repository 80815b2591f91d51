import { describe, expect, it } from "vitest";
import { AppError } from "./errors.ts";
import { paymentRefusal, remedyFields, withOffers } from "./payment-remedy.ts";

const x402 = {
  accepted: true as const,
  x402_version: 2 as const,
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: "50000",
  pay_to: "0x1111111111111111111111111111111111111111",
  how: "pay",
};

describe("the 402 remedy", () => {
  it("adds the plans page and the x402 offer to a payment refusal, keeping what billing said", () => {
    const error = paymentRefusal("payment_required", "Insufficient balance", {
      missing: "insufficient_funds",
      top_up_url: "https://pm.example/wallet",
      price_cents: 5,
      balance_micros: 1200,
    });
    withOffers(error, { plansUrl: "https://pm.example/explore/haiku", x402 });
    expect(remedyFields(error)).toEqual({
      remedy: {
        missing: "insufficient_funds",
        top_up_url: "https://pm.example/wallet",
        plans_url: "https://pm.example/explore/haiku",
        price_cents: 5,
        balance_micros: 1200,
        x402,
      },
    });
  });

  it("gives a key's limit the API keys page and no top-up link, money the wallet and no keys page", () => {
    const offers = {
      topUpUrl: "https://pm.example/wallet",
      keysUrl: "https://pm.example/api-keys",
      plansUrl: "https://pm.example/explore/haiku",
    };
    const limit = withOffers(new AppError("key_limit_reached", "limit"), offers);
    expect((limit as AppError).remedy).toEqual({
      missing: "spend_limit_reached",
      keys_url: "https://pm.example/api-keys",
      plans_url: "https://pm.example/explore/haiku",
    });
    const debt = withOffers(new AppError("account_in_debt", "owes"), offers);
    expect((debt as AppError).remedy).toEqual({
      missing: "account_in_debt",
      top_up_url: "https://pm.example/wallet",
      plans_url: "https://pm.example/explore/haiku",
    });
  });

  it("leaves every other error alone", () => {
    const notFound = new AppError("not_found", "Application not found");
    expect(withOffers(notFound, { x402, topUpUrl: "https://pm.example/wallet" })).toBe(notFound);
    expect(notFound.remedy).toBeUndefined();
    expect(remedyFields(notFound)).toEqual({});
    expect(remedyFields(new Error("boom"))).toEqual({});
  });
});
