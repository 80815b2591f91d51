import { describe, expect, it } from "vitest";
import { BURN_ADDRESS, X402_TEST_PAY_TO } from "../x402-facilitator.ts";
import { type AgentBooks, type AgentCallEntry, judgeAgents } from "./agent-calls.ts";
import type { CallPlan } from "./calls.ts";
import type { X402PaymentRow } from "./x402-calls.ts";

// The agents' judge (issue 40) on made-up rows: a consistent run on both rails flags nothing, and
// every violation it can raise is raised by a hand-made bad input.

const PAYER = "0x00000000000000000000000000000000000000aa";
const X402_USER = "x402-payer";
const MPP_USER = "mpp-payer";
const tx = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as `0x${string}`;
const nonce = (n: number) => `0x${(n + 1000).toString(16).padStart(64, "0")}` as `0x${string}`;

function x402Payment(n: number, status: string, extra: Partial<X402PaymentRow> = {}): X402PaymentRow {
  return {
    id: `x402-${n}`,
    status,
    tx_hash: status === "credited" ? tx(n) : null,
    payer_user_id: X402_USER,
    payer: PAYER,
    nonce: nonce(n),
    amount_micros: "500000",
    ...extra,
  };
}

const transfer = (n: number, to: string = X402_TEST_PAY_TO, value = 500_000n) => ({
  from: PAYER as `0x${string}`,
  to: to as `0x${string}`,
  value,
  nonce: nonce(n),
  transaction: tx(n),
});

const plan: CallPlan = {
  style: "dify",
  mode: "completion",
  streaming: false,
  upstream: {} as CallPlan["upstream"],
};

function call(seq: number, extra: Partial<AgentCallEntry>): AgentCallEntry {
  return {
    kind: "agent_call",
    seq,
    actor: 0,
    rail: "x402",
    action: "paid call",
    node: "a",
    agent: PAYER,
    app: "app",
    appId: "app-id",
    plan,
    startedAt: 0,
    endedAt: 1,
    status: 200,
    chunks: 0,
    completed: true,
    aborted: false,
    replayed: false,
    priceHeaders: {},
    ...extra,
  };
}

/**
 * x402: one payment credited (its transfer), one failed (its nonce burnt elsewhere); 7 cents
 * charged, 10 cents asked back (owed), 33 cents left. MPP: one payment credited (50 cents
 * captured), one declined; 20 cents charged, 30 cents refunded through Stripe, nothing left.
 */
function consistent() {
  const books: AgentBooks = {
    payers: [
      { id: X402_USER, issuer: "x402" },
      { id: MPP_USER, issuer: "mpp" },
    ],
    invocations: [
      { id: "inv-1", caller_user_id: X402_USER, status: "success", charged_cents: 7 },
      { id: "inv-2", caller_user_id: X402_USER, status: "error", charged_cents: 0 },
      { id: "inv-3", caller_user_id: MPP_USER, status: "success", charged_cents: 20 },
    ],
    mppPayments: [
      {
        id: "mpp-1",
        status: "credited",
        reference: "pi_1",
        payer_user_id: MPP_USER,
        amount_micros: "500000",
      },
      { id: "mpp-2", status: "failed", reference: null, payer_user_id: MPP_USER, amount_micros: "500000" },
    ],
    refunds: [
      { id: "r-1", payer_user_id: X402_USER, rail: "x402", status: "owed", amount_micros: "100000" },
      { id: "r-2", payer_user_id: MPP_USER, rail: "mpp", status: "refunded", amount_micros: "300000" },
    ],
    balances: new Map([
      [X402_USER, 330_000],
      [MPP_USER, 0],
    ]),
  };
  return {
    calls: [
      call(1, { invocationId: "inv-1", reportedCents: 7, paidBy: "wallet" }),
      call(2, { status: 502, completed: false, invocationId: "inv-2" }),
      call(3, {
        rail: "mpp",
        action: "key call",
        invocationId: "inv-3",
        reportedCents: 20,
        paidBy: "wallet",
      }),
      call(4, { action: "replay", status: 402 }),
      call(5, { rail: "mpp", action: "refund", refund: { status: "refunded", amountMicros: 300_000 } }),
      call(6, { rail: "mpp", status: 402, completed: false, copy: { node: "b", status: 402 } }),
      call(7, {
        action: "identifier retry",
        invocationId: "inv-1",
        firstInvocationId: "inv-1",
        priceHeaders: { "promptmint-payment-replayed": "true" },
      }),
      // A 402 because a refund emptied the balance first: fine.
      call(8, { action: "key call", status: 402, completed: false, errorCode: "insufficient_funds" }),
    ],
    books,
    x402Payments: [x402Payment(1, "credited"), x402Payment(2, "failed")],
    transfers: [transfer(1), transfer(2, BURN_ADDRESS)],
    cleared: 500_000,
    captured: [{ id: "pi_1", amount: 50, refunded: 30 }],
  };
}

type Input = ReturnType<typeof consistent>;

function flags(change: (input: Input) => void = () => {}): string[] {
  const input = consistent();
  change(input);
  const found: string[] = [];
  judgeAgents(input, (kind) => found.push(kind));
  return found;
}

const replaceCall = (input: Input, seq: number, extra: Partial<AgentCallEntry>) => {
  input.calls = input.calls.map((entry) => (entry.seq === seq ? { ...entry, ...extra } : entry));
};

describe("the agents' judge (issue 40)", () => {
  it("a consistent run on both rails → nothing flagged", () => {
    expect(flags()).toEqual([]);
  });

  it("a payer's money does not add up (credited ≠ charged + refunds + balance) → flagged", () => {
    expect(flags((input) => input.books.balances.set(X402_USER, 330_001))).toEqual([
      "agents: a payer's credited payments are not its charged calls, refunds and balance",
    ]);
    // A refund taken twice from the same balance.
    expect(
      flags((input) =>
        input.books.refunds.push({ ...input.books.refunds[1], id: "r-3" } as AgentBooks["refunds"][number]),
      ),
    ).toContain("agents: a payer's credited payments are not its charged calls, refunds and balance");
  });

  it("a failed invocation charged → flagged (twice: by itself, and as the failed call the agent saw)", () => {
    const found = flags((input) => {
      const failed = input.books.invocations[1];
      if (failed) failed.charged_cents = 5;
      input.books.balances.set(X402_USER, 280_000);
    });
    expect(found).toEqual([
      "agents: a failed call was charged",
      "agents: a refused or failed call was charged",
    ]);
  });

  it("x402: a credited payment without its transfer, of another amount, money for a failed payment, an open payment, an unknown transfer, clearing off → each flagged", () => {
    expect(flags((input) => ((input.x402Payments[0] as X402PaymentRow).tx_hash = ""))).toEqual([
      "x402: a credited payment is not one confirmed transfer to the receiving address",
    ]);
    expect(
      flags((input) => {
        input.transfers[0] = transfer(1, X402_TEST_PAY_TO, 400_000n);
        input.cleared = 400_000;
      }),
    ).toEqual(["x402: a transfer moved another amount than its payment"]);
    expect(
      flags((input) => {
        input.transfers[1] = transfer(2);
        input.cleared = 1_000_000;
      }),
    ).toEqual(["x402: money moved to us for a failed payment"]);
    expect(flags((input) => input.x402Payments.push(x402Payment(3, "settling")))).toEqual([
      "x402: a payment left settling after the sweep",
    ]);
    expect(
      flags((input) => {
        input.transfers.push(transfer(9));
        input.cleared = 1_000_000;
      }),
    ).toEqual(["x402: a transfer no payment records"]);
    expect(flags((input) => (input.cleared = 0))).toEqual([
      "x402: the receiving address's transfers differ from x402_clearing",
    ]);
  });

  it("MPP: a capture no payment records, of another amount, a credited payment never captured, one left settling, refunds Stripe did not make → each flagged", () => {
    expect(flags((input) => input.captured.push({ id: "pi_2", amount: 50, refunded: 0 }))).toEqual([
      "mpp: a Stripe capture no credited payment records",
    ]);
    expect(flags((input) => ((input.captured[0] as { amount: number }).amount = 60))).toEqual([
      "mpp: a capture of another amount than its payment",
    ]);
    expect(flags((input) => (input.captured = [{ id: "pi_9", amount: 50, refunded: 30 }]))).toEqual([
      "mpp: a Stripe capture no credited payment records",
      "mpp: a credited payment Stripe never captured",
    ]);
    expect(
      flags((input) =>
        input.books.mppPayments.push({
          id: "mpp-3",
          status: "settling",
          reference: null,
          payer_user_id: MPP_USER,
          amount_micros: "500000",
        }),
      ),
    ).toEqual(["mpp: a payment left settling after the sweep"]);
    expect(
      flags((input) => ((input.books.mppPayments[1] as { amount_micros: string }).amount_micros = "70000")),
    ).toEqual(["mpp: a payment below Stripe's 50-cent minimum"]);
    // Stripe refunded part of a refund the books still call owed (or refunded more than asked).
    expect(flags((input) => ((input.books.refunds[1] as { status: string }).status = "owed"))).toEqual([
      "mpp: what Stripe refunded differs from the refunded refunds",
    ]);
    expect(flags((input) => ((input.captured[0] as { refunded: number }).refunded = 40))).toEqual([
      "mpp: what Stripe refunded differs from the refunded refunds",
    ]);
    expect(flags((input) => ((input.books.refunds[0] as { status: string }).status = "refunded"))).toEqual([
      "x402: a refund marked paid (x402 has no refund)",
    ]);
  });

  it("a replay taken, a refund not answered, one credential taken by both processes → each flagged", () => {
    expect(flags((input) => replaceCall(input, 4, { status: 200 }))).toEqual([
      "agents: a replayed credential was not refused",
    ]);
    // A replayed payment-identifier retry is answered from its first payment: not a payment taken.
    expect(
      flags((input) =>
        replaceCall(input, 4, { status: 200, priceHeaders: { "promptmint-payment-replayed": "true" } }),
      ),
    ).toEqual([]);
    expect(flags((input) => replaceCall(input, 5, { status: 500 }))).toEqual([
      "agents: a refund was not answered",
    ]);
    expect(
      flags((input) => replaceCall(input, 6, { status: 503, copy: { node: "b", status: 200 } })),
    ).toEqual(["agents: one credential taken by both processes"]);
    // Refused before paying on both (an Idempotency-Key in flight, an oversized input): nothing taken.
    expect(
      flags((input) => replaceCall(input, 6, { status: 409, copy: { node: "b", status: 413 } })),
    ).toEqual([]);
  });

  it("a payment-identifier retry paid again or answered by another call → flagged", () => {
    expect(flags((input) => replaceCall(input, 7, { priceHeaders: {} }))).toEqual([
      "x402: a payment-identifier retry was not answered from its first payment",
    ]);
    expect(flags((input) => replaceCall(input, 7, { invocationId: "inv-3" }))).toEqual([
      "x402: a payment-identifier retry ran another call",
    ]);
  });

  it("an answered call not charged as its payer's wallet call, another cost reported, another payer named → each flagged", () => {
    expect(flags((input) => replaceCall(input, 1, { invocationId: "inv-9" }))).toEqual([
      "agents: an answered call has no charged call of its payer",
    ]);
    expect(flags((input) => replaceCall(input, 1, { invocationId: "inv-2" }))).toEqual([
      "agents: an answered call has no charged call of its payer",
    ]);
    expect(flags((input) => replaceCall(input, 1, { reportedCents: 8 }))).toEqual([
      "agents: an answer reported another cost than charged",
    ]);
    expect(flags((input) => replaceCall(input, 1, { paidBy: "x402" }))).toEqual([
      "agents: an answer says it was paid otherwise than from the balance",
    ]);
  });
});
