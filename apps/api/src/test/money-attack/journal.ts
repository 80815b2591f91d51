import type { AgentCallEntry } from "./agent-calls.ts";
import type { CallOutcome, CallPlan } from "./calls.ts";

/** One paid call as its client saw it. */
export interface CallEntry extends CallOutcome {
  kind: "call";
  seq: number;
  actor: number;
  action: string;
  node: string;
  payer: string;
  payerId: string;
  app: string;
  appId: string;
  /** The process its stop (if any) was sent to. */
  stopNode?: string;
  /** The caller owns the app: the call is free. */
  owner: boolean;
  plan: CallPlan;
  startedAt: number;
  endedAt: number;
  /** For a 402: the payer's wallet and unspent held money read right after it, and whether a top-up overlapped. */
  refusal?: {
    walletCents: number;
    heldCents: number;
    /** Of `heldCents`, what holds already recalled but still open set aside (not usable). */
    recalledHeldCents?: number;
    topUpOverlapped: boolean;
  };
  /**
   * For a 402 `key_limit_reached`: whether the call had its key to itself, the key's spend counter
   * in its current period right after, the part of it that reservations of calls not charged (yet)
   * hold, and the highest price and lowest limit that could have applied.
   */
  keyRefusal?: {
    lone: boolean;
    spentMicros?: number;
    unchargedReservedMicros?: number;
    priceCents: number;
    limitCents: number;
  };
}

/** Anything else that happened: top-ups, plans, prices, keys, apps removed, kills. */
export interface EventEntry {
  kind:
    | "top_up"
    | "subscribe"
    | "cancel"
    | "renew"
    | "price"
    | "revoke_key"
    | "key_limit"
    | "edit_plan"
    | "remove_app"
    | "kill"
    | "suspend"
    | "unsuspend"
    | "refund"
    | "dispute"
    | "payout"
    | "experiment"
    | "label_move"
    // Issue 37: a creator's calls no price pays for (creator-calls.ts).
    | "test_prompt"
    | "eval_run"
    // Issue 41: online evals turned on and off (online-evals.ts).
    | "online_evals"
    // Issue 42: free trials offered and started, promotion codes made and redeemed (sponsored.ts).
    | "trial"
    | "promotion"
    // Issue 43: an organization's members' calls, budgets and roles changed (organizations.ts).
    | "org_call"
    | "org_budget"
    | "org_role";
  seq: number;
  actor: number;
  startedAt: number;
  endedAt: number;
  status?: number;
  detail: Record<string, unknown>;
}

export type Entry = CallEntry | EventEntry | AgentCallEntry;

/** Everything the clients saw, in the order it finished. */
export class Journal {
  readonly entries: Entry[] = [];
  private seq = 0;

  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  add<T extends Entry>(entry: T): T {
    this.entries.push(entry);
    return entry;
  }

  calls(): CallEntry[] {
    return this.entries.filter((entry): entry is CallEntry => entry.kind === "call");
  }

  agentCalls(): AgentCallEntry[] {
    return this.entries.filter((entry): entry is AgentCallEntry => entry.kind === "agent_call");
  }

  events(kind: EventEntry["kind"]): EventEntry[] {
    return this.entries.filter((entry): entry is EventEntry => entry.kind === kind);
  }
}
