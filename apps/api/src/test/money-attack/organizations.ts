import { and, eq, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { memberSpendReservations, organizationMembers } from "../../db/schema/index.ts";
import { sweepMemberReservations } from "../../modules/billing/call-payment/member-budgets.ts";
import { type Caller, callerAt, createCaller, fundWallet } from "../caller.ts";
import { actingFor, insertOrganization, setMember } from "../organizations.ts";
import { type Attack, journalEvent, liveApps, pickNode } from "./attack.ts";
import type { Prng } from "./prng.ts";

/**
 * Organizations in the money attack (issue 43, decision 084): an organization whose wallet a
 * billing member funds, three developers with monthly budgets calling with the keys they made and
 * with their tokens and the organization header, while budgets are raised and lowered and members
 * lowered, removed and added back. judgeOrganizations says what must hold: each member's month
 * spend equals their charged calls once swept; every organization call is charged to the
 * organization, once; no budget is passed by the calls that started while it was in force; no
 * call that started after a member's removal committed is charged.
 */

interface Member {
  userId: string;
  caller: Caller;
  key: string;
}

interface OrganizationState {
  id: string;
  members: Member[];
  /** Each budget in force from `from` (its update committed) until the next change began (`until`). */
  budgets: { userId: string; cents: number | null; from: number; until?: number }[];
  /** When a member was out: from the removal's commit until their re-adding began. */
  absences: { userId: string; from: number; until?: number }[];
  /** Each call's client start, member and outcome. */
  calls: {
    userId: string;
    startedAt: number;
    endedAt: number;
    status: number;
    code?: string;
    invocationId?: string;
  }[];
}

const states = new WeakMap<Attack, Promise<OrganizationState>>();

function organizationOf(attack: Attack): Promise<OrganizationState> {
  let state = states.get(attack);
  if (!state) {
    // A failed set-up (a kill meanwhile) is tried again by the next action.
    state = createOrganization(attack).catch((error) => {
      states.delete(attack);
      throw error;
    });
    states.set(attack, state);
  }
  return state;
}

async function createOrganization(attack: Attack): Promise<OrganizationState> {
  const db = attack.cluster.database.db;
  const baseUrl = attack.cluster.nodes[0]?.baseUrl ?? "";
  const owner = await createCaller(baseUrl, "Attack Org Owner");
  const billing = await createCaller(baseUrl, "Attack Org Billing");
  const id = await insertOrganization(db, owner, "Attack Org");
  await setMember(db, id, billing, "billing");
  await fundWallet(actingFor(billing, id), 20_000);
  const members: Member[] = [];
  const budgets: OrganizationState["budgets"] = [];
  for (const [i, cents] of [
    [0, 10],
    [1, 60],
    [2, null],
  ] as const) {
    const caller = await createCaller(baseUrl, `Attack Org Developer ${i}`);
    const userId = await setMember(db, id, caller, "developer", cents);
    budgets.push({ userId, cents, from: Date.now() });
    const made = await actingFor(caller, id).api("POST", "/api/keys/", { body: { name: `dev ${i}` } });
    if (made.status !== 201) throw new Error(`org key: ${made.status}`);
    members.push({ userId, caller, key: made.body.key });
  }
  return { id, members, budgets, absences: [], calls: [] };
}

/** Made before the attack starts, so its minutes go to calls, not to signing its people up. */
export async function prepareOrganization(attack: Attack): Promise<void> {
  await organizationOf(attack);
}

/**
 * Two or three members' calls for the organization at once (racing for their budgets and its
 * wallet), each with the member's key or signed in with the header.
 */
export async function organizationCall(attack: Attack, prng: Prng, actor: number): Promise<void> {
  const state = await organizationOf(attack);
  const calls = prng.int(2, 3);
  await Promise.all(
    Array.from({ length: calls }, (_, i) => oneOrganizationCall(attack, state, prng.fork(i + 1), actor)),
  );
}

async function oneOrganizationCall(
  attack: Attack,
  state: OrganizationState,
  prng: Prng,
  actor: number,
): Promise<void> {
  const member = prng.pick(state.members);
  const app = prng.pick(liveApps(attack).filter((a) => a.kind === "prompt"));
  if (!member || !app) return;
  const viaKey = prng.chance(0.5);
  const person = actingFor(callerAt(pickNode(attack, prng).baseUrl, member.caller), state.id);
  const startedAt = Date.now();
  await journalEvent(attack, actor, "org_call", async () => {
    const answer = await attack.inFlight.use(() =>
      person.api(
        "POST",
        `/api/app/${app.slug}/${app.mode === "chat" ? "chat-messages" : "completion-messages"}`,
        {
          body: { inputs: { query: "org" }, query: "org", response_mode: "blocking", user: "org" },
          ...(viaKey ? { auth: member.key } : {}),
        },
      ),
    );
    state.calls.push({
      userId: member.userId,
      startedAt,
      endedAt: Date.now(),
      status: answer.status,
      code: answer.body?.code,
      invocationId: answer.status === 200 ? answer.body?.message_id : undefined,
    });
    // Refusals of a budget, a role or a removal are the point; anything else unexpected is named.
    const expected = [200, 401, 402, 403, 404].includes(answer.status);
    return {
      status: expected ? 200 : answer.status,
      detail: { via: viaKey ? "key" : "header", code: answer.body?.code },
    };
  });
}

/** A member's budget raised, lowered (below their spend now and then) or lifted, while calls run. */
export async function organizationBudget(attack: Attack, prng: Prng, actor: number): Promise<void> {
  const state = await organizationOf(attack);
  const member = prng.pick(state.members);
  if (!member) return;
  const cents = prng.chance(0.2) ? null : prng.int(0, 12) * 10;
  await journalEvent(attack, actor, "org_budget", async () => {
    const began = Date.now();
    const current = state.budgets.filter((b) => b.userId === member.userId && b.until === undefined);
    for (const budget of current) budget.until = began;
    await attack.cluster.database.db
      .update(organizationMembers)
      .set({ monthlyBudgetCents: cents })
      .where(
        and(eq(organizationMembers.organizationId, state.id), eq(organizationMembers.userId, member.userId)),
      );
    state.budgets.push({ userId: member.userId, cents, from: Date.now() });
    return { status: 200, detail: { member: member.userId, cents } };
  });
}

/** A member lowered to viewer, removed, or added back as a developer, while calls run. */
export async function organizationRole(attack: Attack, prng: Prng, actor: number): Promise<void> {
  const state = await organizationOf(attack);
  const member = prng.pick(state.members);
  if (!member) return;
  const db = attack.cluster.database.db;
  const where = and(
    eq(organizationMembers.organizationId, state.id),
    eq(organizationMembers.userId, member.userId),
  );
  const move = prng.pick(["viewer", "remove", "restore", "restore"] as const);
  await journalEvent(attack, actor, "org_role", async () => {
    const open = state.absences.find((a) => a.userId === member.userId && a.until === undefined);
    if (move === "restore") {
      if (open) open.until = Date.now();
      const [budget] = state.budgets.filter((b) => b.userId === member.userId && b.until === undefined);
      await db
        .insert(organizationMembers)
        .values({
          organizationId: state.id,
          userId: member.userId,
          role: "developer",
          monthlyBudgetCents: budget?.cents ?? null,
        })
        .onConflictDoUpdate({
          target: [organizationMembers.organizationId, organizationMembers.userId],
          set: { role: "developer" },
        });
    } else if (move === "viewer") await db.update(organizationMembers).set({ role: "viewer" }).where(where);
    else {
      await db.delete(organizationMembers).where(where);
      if (!open) state.absences.push({ userId: member.userId, from: Date.now() });
    }
    return { status: 200, detail: { member: member.userId, move } };
  });
}

/** What must hold for the organization's money, after the attack; its figures for the report. */
export async function judgeOrganizations(
  db: Database,
  attack: Attack,
  flag: (kind: string, example: string) => void,
): Promise<{ calls: number; charged: number; budgetRefusals: number; roleRefusals: number } | undefined> {
  const pending = states.get(attack);
  if (!pending) return undefined;
  const state = await pending;
  await db.update(memberSpendReservations).set({ expiresAt: new Date(Date.now() - 1_000) });
  await sweepMemberReservations(db);
  const rows = await queryRows<{
    id: string;
    member_id: string | null;
    caller: string;
    charged: number;
    payer: string | null;
  }>(
    db,
    sql`select i.id::text, i.member_id::text, i.caller_user_id::text as caller, i.charged_cents::int as charged,
          h.payer_id::text as payer
        from invocations i left join holds h on h.id = i.hold_id
        where i.hold_id is not null and i.status = 'success'
          and (i.caller_user_id = ${state.id}::uuid or i.member_id is not null)`,
  );
  const charged = new Map(rows.map((row) => [row.id, row]));
  for (const row of rows) {
    if (row.caller !== state.id || row.payer !== state.id)
      flag(
        "an organization's call charged to someone else",
        `${row.id} caller ${row.caller} payer ${row.payer}`,
      );
    if (row.member_id === null) flag("an organization's call without its member", row.id);
  }
  for (const member of state.members) {
    const [spend] = await queryRows<{ spent: string }>(
      db,
      sql`select coalesce(sum(spent_micros), 0)::text as spent from member_spend
          where organization_id = ${state.id}::uuid and user_id = ${member.userId}::uuid`,
    );
    const calls = rows.filter((row) => row.member_id === member.userId);
    const sum = calls.reduce((total, row) => total + row.charged, 0) * 10_000;
    if (Number(spend?.spent ?? 0) !== sum)
      flag(
        "a member's month spend is not their charged calls",
        `${member.userId}: ${spend?.spent} µ$ vs ${sum}`,
      );
  }
  // Calls that started after a budget was set and were answered before the next change began
  // reserved under it, each within it after all before it: together they spent at most it.
  for (const budget of state.budgets) {
    if (budget.cents === null) continue;
    const within = state.calls.filter(
      (call) =>
        call.userId === budget.userId &&
        call.startedAt > budget.from &&
        (budget.until === undefined || call.endedAt < budget.until),
    );
    const spent = within.reduce(
      (total, call) => total + (charged.get(call.invocationId ?? "")?.charged ?? 0),
      0,
    );
    if (spent > budget.cents)
      flag("a member's budget passed", `${budget.userId}: ${spent}¢ by calls started under ${budget.cents}¢`);
  }
  // No call that started after a removal committed (and before the member was added back) is charged.
  for (const absence of state.absences)
    for (const call of state.calls)
      if (
        call.userId === absence.userId &&
        call.startedAt > absence.from &&
        (absence.until === undefined || call.startedAt < absence.until) &&
        call.status === 200
      )
        flag("a removed member's call answered", `${call.userId} ${call.invocationId}`);
  // Every answered call's invocation is charged to the organization, once.
  for (const call of state.calls)
    if (call.status === 200 && (!call.invocationId || !charged.has(call.invocationId)))
      flag("an organization's answered call not charged", `${call.userId} ${call.invocationId}`);
  return {
    calls: state.calls.length,
    charged: rows.length,
    budgetRefusals: state.calls.filter((call) => call.code === "member_budget_reached").length,
    roleRefusals: state.calls.filter(
      (call) => call.status === 401 || call.status === 403 || call.status === 404,
    ).length,
  };
}

/** The organization's invocations: judged by judgeOrganizations, not by the consumers' judge. */
export async function organizationInvocationIds(attack: Attack): Promise<Set<string>> {
  const pending = states.get(attack);
  if (!pending) return new Set();
  const state = await pending;
  return new Set(state.calls.flatMap((call) => (call.invocationId ? [call.invocationId] : [])));
}
