import { describe, expect, it } from "vitest";
import { AppError } from "./errors.ts";
import { mcpRemedyMeta, paymentRefusal, remedyFields, withOffers } from "./payment-remedy.ts";

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

  it("gives a key's limit no top-up link, and leaves every other error alone", () => {
    const limit = withOffers(new AppError("key_limit_reached", "limit"), {
      topUpUrl: "https://pm.example/wallet",
    });
    expect((limit as AppError).remedy).toEqual({ missing: "spend_limit_reached" });
    const notFound = new AppError("not_found", "Application not found");
    expect(withOffers(notFound, { x402 })).toBe(notFound);
    expect(remedyFields(notFound)).toEqual({});
    expect(remedyFields(new Error("boom"))).toEqual({});
  });

  it("gives MCP's tool error its _meta and a line to act on", () => {
    const error = withOffers(paymentRefusal("payment_required", "m", { missing: "insufficient_funds" }), {
      topUpUrl: "https://pm.example/wallet",
      x402,
    });
    const { meta, hint } = mcpRemedyMeta(error);
    expect(meta?.remedy.missing).toBe("insufficient_funds");
    expect(hint).toBe(
      "Top up or subscribe at https://pm.example/wallet. Or pay this one call with x402 (send the request without credentials).",
    );
    expect(mcpRemedyMeta(new AppError("not_found", "x"))).toEqual({ meta: undefined, hint: "" });
  });
});
