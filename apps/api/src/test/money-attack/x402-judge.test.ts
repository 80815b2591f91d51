import { describe, expect, it } from "vitest";
import { BURN_ADDRESS, X402_TEST_PAY_TO } from "../x402-facilitator.ts";
import { judgeX402, type X402PaymentRow } from "./x402-calls.ts";

// The x402 judge's decision-064 checks, on made-up rows: each one flags what it must, and a
// consistent run flags nothing.

const PAYER = "0x00000000000000000000000000000000000000aa";
const tx = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as `0x${string}`;
const nonce = (n: number) => `0x${(n + 1000).toString(16).padStart(64, "0")}` as `0x${string}`;

function payment(n: number, status: string, extra: Partial<X402PaymentRow> = {}): X402PaymentRow {
  return {
    id: `payment-${n}`,
    status,
    tx_hash: status === "settled" || status === "credited" ? tx(n) : null,
    payer_user_id: "payer-user",
    payer: PAYER,
    nonce: nonce(n),
    amount_micros: "50000",
    invocation_id: `invocation-${n}`,
    inv_status: status === "settled" ? "success" : "error",
    charged_cents: status === "settled" ? "5" : "0",
    ...extra,
  };
}

const transfer = (n: number, to: string = X402_TEST_PAY_TO) => ({
  from: PAYER as `0x${string}`,
  to: to as `0x${string}`,
  value: 50_000n,
  nonce: nonce(n),
  transaction: tx(n),
});

function flags(input: Partial<Parameters<typeof judgeX402>[0]>): string[] {
  const found: string[] = [];
  judgeX402(
    {
      calls: [],
      payments: [],
      transfers: [],
      nodes: [],
      cleared: 0,
      credits: new Map(),
      ...input,
    },
    (kind) => found.push(kind),
  );
  return found;
}

describe("the x402 judge (decision 064)", () => {
  const consistent = {
    payments: [payment(1, "settled"), payment(2, "credited"), payment(3, "failed")],
    transfers: [transfer(1), transfer(2), transfer(3, BURN_ADDRESS)],
    cleared: 100_000,
    credits: new Map([["payer-user", 50_000]]),
  };

  it("a consistent run: settled and credited payments are the transfers to us, a burnt nonce is no one's → nothing flagged", () => {
    expect(flags(consistent)).toEqual([]);
  });

  it("a settled payment whose transaction is not a transfer to the receiving address (an empty or burnt one) → flagged", () => {
    expect(
      flags({ ...consistent, payments: [payment(1, "settled", { tx_hash: "" }), payment(2, "credited")] }),
    ).toContain("x402: a settled payment is not one confirmed transfer to the receiving address");
    expect(
      flags({
        ...consistent,
        payments: [payment(1, "settled"), payment(2, "credited"), payment(3, "settled")],
      }),
    ).toContain("x402: a settled payment is not one confirmed transfer to the receiving address");
  });

  it("money at the receiving address for a failed payment, or more than x402_clearing shows → flagged", () => {
    const found = flags({ ...consistent, payments: [payment(1, "settled"), payment(2, "failed")] });
    expect(found).toContain("x402: money moved to us for a failed payment");
    expect(flags({ ...consistent, cleared: 50_000 })).toContain(
      "x402: the receiving address's transfers differ from x402_clearing",
    );
  });

  it("a credited payment its payer does not hold, or a payment left pending → flagged", () => {
    expect(flags({ ...consistent, credits: new Map() })).toContain(
      "x402: a payer's credit is not what its credited payments kept",
    );
    expect(flags({ ...consistent, payments: [...consistent.payments, payment(4, "settling")] })).toContain(
      "x402: a payment left settling after the sweep",
    );
  });
});
