import { sql } from "drizzle-orm";
import { type Caller, callerAt } from "../caller.ts";
import type { AgentPool } from "./agent-calls.ts";
import type { CallPlan } from "./calls.ts";
import type { Cluster, Node } from "./cluster.ts";
import type { EventEntry, Journal } from "./journal.ts";
import type { Prng } from "./prng.ts";
import type { AttackApp, Person, World } from "./world.ts";

export const FEE_PERCENT = 10;
/** At most this many calls in flight at once (the machine has two cores for everything). */
export const MAX_IN_FLIGHT = 40;

/** What every action may use: the cluster, the people and apps, the journal, shared gates. */
export interface Attack {
  cluster: Cluster;
  world: World;
  journal: Journal;
  endsAt: number;
  inFlight: Semaphore;
  lastKillAt: number;
  /** Top-ups per payer id, to tell a fair 402 from one a concurrent top-up makes ambiguous. */
  topUps: Map<string, { from: number; to?: number }[]>;
  /** Idempotency keys already used, with the call they were first sent with (for replays). */
  idempotent: { key: string; plan: CallPlan; payer: Person; app: AttackApp }[];
  busyApps: Set<string>;
  /** Agents paying with x402 or MPP (agent-calls.ts), one per actor and rail, and one per rail that cannot pay. */
  agents?: AgentPool;
}

export class Semaphore {
  private free: number;
  private waiting: (() => void)[] = [];

  constructor(size = MAX_IN_FLIGHT) {
    this.free = size;
  }

  async use<T>(run: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await run();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

/** A timestamp column as milliseconds since the epoch (text, exact). */
export const epochMs = (column: ReturnType<typeof sql>) =>
  sql`(extract(epoch from ${column}) * 1000)::bigint::text`;

export const liveApps = (attack: Attack) => attack.world.apps.filter((app) => app.removedAt === undefined);

/** Usually a live app (of that kind); now and then a removed one (its calls must fail and cost nothing). */
export function pickApp(attack: Attack, prng: Prng, kind?: AttackApp["kind"]): AttackApp {
  const ofKind = (apps: AttackApp[]) => apps.filter((app) => kind === undefined || app.kind === kind);
  const live = ofKind(liveApps(attack));
  return prng.chance(0.03) || live.length === 0 ? prng.pick(ofKind(attack.world.apps)) : prng.pick(live);
}

/** Mostly consumers; one call in ten is the creator's own (free). */
export function pickPayer(attack: Attack, prng: Prng): Person {
  return prng.chance(0.1) ? attack.world.creator : prng.pick(attack.world.consumers);
}

export function pickNode(attack: Attack, prng: Prng): Node {
  const up = attack.cluster.nodes.filter((node) => node.process?.isAlive());
  return prng.pick(up.length > 0 ? up : attack.cluster.nodes);
}

/** A person's management calls go to either process, like their paid calls. */
export function viaAnyNode(attack: Attack, prng: Prng, person: Person): Caller {
  return callerAt(pickNode(attack, prng).baseUrl, person.caller);
}

/** Runs a management step and journals it. */
export async function journalEvent(
  attack: Attack,
  actor: number,
  kind: EventEntry["kind"],
  run: () => Promise<{ status?: number; detail: Record<string, unknown> }>,
): Promise<void> {
  const startedAt = Date.now();
  const { status, detail } = await run().catch((error) => ({
    status: 0,
    detail: { error: String(error).slice(0, 200) },
  }));
  attack.journal.add({
    kind,
    seq: attack.journal.nextSeq(),
    actor,
    startedAt,
    endedAt: Date.now(),
    status,
    detail,
  });
}
