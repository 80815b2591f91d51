import { describe, expect, it } from "vitest";
import { cleanReconcileReport, type ReconcileReport } from "../../modules/billing/reconcile.ts";
import type { CallPlan } from "./calls.ts";
import type { Node } from "./cluster.ts";
import { type CallEntry, Journal } from "./journal.ts";
import { type InvocationRow, judge, type KeySpend } from "./judge.ts";
import type { AttackApp } from "./world.ts";

/**
 * The money attack's judge on hand-made journals: each check added for the paid clients (MCP,
 * Responses, workflow runs, stops, limited keys) flags what it must, and only that.
 */
const app: AttackApp = {
  kind: "prompt",
  label: "app-1",
  id: "app-id",
  slug: "app-1",
  mode: "completion",
  prices: [{ cents: 20, sentAt: 0, doneAt: 0 }],
  planIds: [],
};
const nodes: Node[] = [
  { name: "a", baseUrl: "http://a", downtimes: [] },
  { name: "b", baseUrl: "http://b", downtimes: [] },
];
const ID = "0d3c6b1e-4a7f-4c2d-9e8f-1a2b3c4d5e6f";
const clean: ReconcileReport = cleanReconcileReport();

function callOf(plan: Partial<CallPlan>, outcome: Partial<CallEntry>): CallEntry {
  return {
    kind: "call",
    seq: 1,
    actor: 0,
    action: "test",
    node: "a",
    payer: "consumer-1",
    payerId: "payer-id",
    app: app.label,
    appId: app.id,
    owner: false,
    plan: {
      style: "dify",
      mode: "completion",
      streaming: false,
      upstream: { delayMs: 0, gapMs: 0, words: 20 },
      ...plan,
    },
    startedAt: 1_000,
    endedAt: 2_000,
    status: 200,
    chunks: 0,
    completed: true,
    aborted: false,
    replayed: false,
    priceHeaders: {},
    ...outcome,
  };
}

const charged = (cents: number): InvocationRow => ({
  id: ID,
  application_id: app.id,
  caller_user_id: "payer-id",
  status: "success",
  charged_cents: cents,
  hold_id: "hold-id",
  subscription_id: null,
  started_ms: 1_000,
  recorded_ms: 1_500,
});

function kinds(calls: CallEntry[], invocations: InvocationRow[], keys: KeySpend[] = []): string[] {
  const journal = new Journal();
  for (const call of calls) journal.add(call);
  return judge({ journal, apps: [app], nodes, invocations, periods: [], reconcile: clean, keys }).map(
    (violation) => violation.kind,
  );
}

describe("money attack judge", () => {
  it("compares the cost an MCP result or Responses answer reports, and its payer, with the charge", () => {
    const mcp = (reported: number, paidBy: string) =>
      callOf({ style: "mcp-app" }, { invocationId: ID, reportedCents: reported, paidBy });
    expect(kinds([mcp(20, "wallet")], [charged(20)])).toEqual([]);
    expect(kinds([mcp(25, "wallet")], [charged(20)])).toEqual([
      "answer reported a cost other than what was charged",
    ]);
    expect(kinds([mcp(20, "plan")], [charged(20)])).toEqual([
      "answer named another payer than the one charged",
    ]);
    const header = callOf(
      { style: "responses" },
      { invocationId: ID, priceHeaders: { "promptmint-charged": "0.30 USD" } },
    );
    expect(kinds([header], [charged(20)])).toEqual(["Promptmint-Charged header other than what was charged"]);
  });

  it("accepts a sponsored call paid by its creator's hold and charged 0, and flags one charged to its caller", () => {
    const trialCall = (reported: number, paidBy: string) =>
      callOf({}, { invocationId: ID, reportedCents: reported, paidBy });
    const sponsored = (cents: number): InvocationRow => ({ ...charged(cents), sponsored: "trial" });
    expect(kinds([trialCall(0, "trial")], [sponsored(0)])).toEqual([]);
    expect(kinds([trialCall(0, "wallet")], [sponsored(0)])).toEqual([
      "answer named another payer than the one charged",
    ]);
    expect(kinds([trialCall(0, "trial")], [sponsored(20)])).toEqual(["sponsored answer charged its caller"]);
    // Without its sponsored row, a hold-paid call charged 0 is a call not charged.
    expect(kinds([trialCall(0, "trial")], [charged(0)])).toEqual([
      "answer named another payer than the one charged",
      "answer delivered, not charged",
    ]);
  });

  it("judges MCP batches: refused whole costs nothing, a repeated id answers nothing, each answer charged once", () => {
    const batch = (shape: Partial<NonNullable<CallPlan["batch"]>>, answered: string[], status = 200) =>
      callOf(
        { style: "mcp-app", batch: { members: 3, repeatedIds: false, notifications: 1, ...shape } },
        {
          status,
          completed: false,
          batch: {
            answered: answered.map((invocationId, i) => ({
              id: i + 1,
              invocationId,
              reportedCents: 20,
              paidBy: "wallet",
            })),
          },
        },
      );
    // Refused whole (400): anything charged is a charge without a delivered answer.
    expect(kinds([batch({}, [], 400)], [])).toEqual([]);
    expect(kinds([batch({}, [], 400)], [charged(20)])).toEqual(["charged without a delivered answer"]);
    // Answered: each member's answer is judged like a single call.
    expect(kinds([batch({}, [ID])], [charged(20)])).toEqual([]);
    expect(kinds([batch({}, [ID])], [])).toEqual(["answer delivered, no invocation recorded"]);
    expect(kinds([batch({}, [ID, ID])], [charged(20)])).toEqual(["one invocation answered twice in a batch"]);
    expect(kinds([batch({ repeatedIds: true }, [ID])], [charged(20)])).toEqual([
      "batch with a repeated id answered",
    ]);
    expect(kinds([batch({ members: 1 }, [ID, ID])], [charged(20)])).toEqual([
      "batch answered more members than its requests",
      "one invocation answered twice in a batch",
    ]);
  });

  it("allows the price of a change whose answer was lost (it may have applied), and no other", () => {
    const call = callOf({ style: "workflow" }, { invocationId: ID, reportedCents: 7, paidBy: "wallet" });
    expect(kinds([call], [charged(7)])).toEqual(["charged a price the app never had"]);
    app.prices.push({ cents: 7, sentAt: 500, doneAt: Number.POSITIVE_INFINITY });
    try {
      expect(kinds([call], [charged(7)])).toEqual([]);
    } finally {
      app.prices.pop();
    }
  });

  it("flags a charge for a stream that named its id but sent no content (stopped before content)", () => {
    const stopped = callOf(
      { style: "workflow", streaming: true, stopAfterChunks: 0 },
      { invocationId: ID, chunks: 0, stop: { afterChunks: 0, status: 200 }, stopNode: "a" },
    );
    expect(kinds([stopped], [{ ...charged(20), status: "error", hold_id: null, charged_cents: 0 }])).toEqual(
      [],
    );
    expect(kinds([stopped], [charged(20)])).toEqual(["charged, its client got no content"]);
    // Its server was killed meanwhile: the end is unknown, and the charge is allowed.
    const killed: Node[] = [
      { ...nodes[0], downtimes: [{ from: 1_500, to: 3_000 }] } as Node,
      nodes[1] as Node,
    ];
    const journal = new Journal();
    journal.add(stopped);
    expect(
      judge({
        journal,
        apps: [app],
        nodes: killed,
        invocations: [charged(20)],
        periods: [],
        reconcile: clean,
        keys: [],
      }),
    ).toEqual([]);
  });

  it("flags a stop sent to the process without the stream that cut it short, or a stop answered 5xx", () => {
    const stream = (chunks: number, status: number) =>
      callOf(
        { style: "dify", streaming: true, stopAfterChunks: 3, stopOnOtherNode: true },
        { invocationId: ID, chunks, stop: { afterChunks: 3, status }, stopNode: "b" },
      );
    expect(kinds([stream(20, 200)], [charged(20)])).toEqual([]);
    expect(kinds([stream(5, 200)], [charged(20)])).toEqual([
      "a stop sent to the other process cut the stream",
    ]);
    expect(kinds([stream(20, 500)], [charged(20)])).toEqual(["stop answered 500"]);
  });

  it("holds each limited key's spend to what its calls were charged, and under its highest limit", () => {
    const key = (spent: number, charged: number, highest = spent): KeySpend => ({
      id: "key-id",
      payer: "consumer-1",
      spentMicros: spent,
      highestPeriodMicros: highest,
      chargedMicros: charged,
      chargedCalls: 3,
      highestLimitCents: 100,
      unchargedReservations: 0,
    });
    expect(kinds([], [], [key(600_000, 600_000)])).toEqual([]);
    expect(kinds([], [], [key(800_000, 600_000)])).toEqual([
      "key spend differs from what its calls were charged",
    ]);
    expect(kinds([], [], [key(1_200_000, 1_200_000)])).toEqual(["key spent above its limit"]);
    // A reservation left behind by an uncharged call: only one a kill cut off may be.
    const leaked = { ...key(600_000, 600_000), unchargedReservations: 1 };
    expect(kinds([], [], [leaked])).toEqual(["key reservations of uncharged calls not given back"]);
    const cut = callOf(
      { limitedKey: true },
      { status: 0, completed: false, transportError: "socket closed" },
    );
    const killed: Node[] = [
      { ...nodes[0], downtimes: [{ from: 1_500, to: 3_000 }] } as Node,
      nodes[1] as Node,
    ];
    const journal = new Journal();
    journal.add(cut);
    expect(
      judge({
        journal,
        apps: [app],
        nodes: killed,
        invocations: [],
        periods: [],
        reconcile: clean,
        keys: [leaked],
      }),
    ).toEqual([]);
  });

  it("judges an owner's 402 by a bound of its model cost hold, not by a price it does not pay", () => {
    const refused = (walletCents: number, bytes?: number) =>
      callOf(bytes ? { oversize: { kind: "message", bytes } } : {}, {
        owner: true,
        status: 402,
        completed: false,
        refusal: { walletCents, heldCents: 0, topUpOverlapped: false },
      });
    // 300 KB at gpt-4's 30 µ$ a token is $9.60 and more: a wallet of $2.42 cannot hold it.
    expect(kinds([refused(242, 300_000)], [])).toEqual([]);
    // An ordinary owner's call holds at most 66¢: refused with $5 in the wallet is a violation.
    expect(kinds([refused(500)], [])).toEqual(["402 with the owner's model cost in the wallet"]);
    expect(kinds([refused(50)], [])).toEqual([]);
  });

  it("flags a key_limit_reached for a lone call whose price fitted under the limit", () => {
    const refused = (spentMicros: number) =>
      callOf(
        { limitedKey: true },
        {
          status: 402,
          completed: false,
          errorCode: "key_limit_reached",
          keyRefusal: {
            lone: true,
            spentMicros,
            unchargedReservedMicros: 0,
            priceCents: 20,
            limitCents: 100,
          },
        },
      );
    expect(kinds([refused(900_000)], [])).toEqual([]);
    expect(kinds([refused(700_000)], [])).toEqual(["key_limit_reached with room under the limit"]);
  });
});
