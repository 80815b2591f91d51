import { type Caller, createCaller, fundWallet } from "../caller.ts";
import type { Prng } from "./prng.ts";

/** A person of the attack: signed up through the real issuer, calling with an API key. */
export interface Person {
  name: string;
  id: string;
  caller: Caller;
  apiKey: { id: string; key: string };
  /** A second key with a spend limit (decision 035), never revoked; consumers only. */
  limitedKey?: LimitedKey;
}

/** A key's spend limit as the attack set it: asked at `sentAt`, answered 200 at `doneAt`. */
export interface LimitChange {
  cents: number;
  sentAt: number;
  doneAt?: number;
}

export interface LimitedKey {
  id: string;
  key: string;
  reset: "daily" | "monthly" | "never";
  limits: LimitChange[];
  /** Calls in flight with this key now, and calls ever started with it (to tell a lone call). */
  inFlight: number;
  started: number;
  /** When its last call ended for its client (its server may still be giving a reservation back). */
  lastEndedAt: number;
}

/** A price the creator set: asked at `sentAt`, in force (answered 200) from `doneAt`. */
export interface PriceChange {
  cents: number;
  sentAt: number;
  doneAt: number;
}

export interface AttackApp {
  label: string;
  /** A prompt app on the scripted model, or a workflow app on the loopback webhook (hook.ts). */
  kind: "prompt" | "workflow";
  id: string;
  slug: string;
  mode: "completion" | "chat";
  prices: PriceChange[];
  planIds: string[];
  /** When the creator's DELETE answered 2xx (the app is gone or archived from then on). */
  removedAt?: number;
}

export interface World {
  /** The workflow apps' webhook. */
  hookUrl: string;
  creator: Person;
  consumers: Person[];
  apps: AttackApp[];
}

/** Starting wallets: comfortable, modest, and one that runs dry (402s, plans it cannot buy). */
const WALLETS_CENTS = [4000, 2500, 1200, 300];

export async function createWorld(baseUrl: string, hookUrl: string, prng: Prng): Promise<World> {
  // Verified through the outbox: payout onboarding needs it (decision 041).
  const creator = await person(baseUrl, "creator", { verified: true });
  const consumers: Person[] = [];
  for (const [i, cents] of WALLETS_CENTS.entries()) {
    const consumer = await person(baseUrl, `consumer-${i + 1}`);
    await fundWallet(consumer.caller, cents);
    consumer.limitedKey = await newLimitedKey(consumer.caller, prng);
    consumers.push(consumer);
  }
  const world: World = { hookUrl, creator, consumers, apps: [] };
  for (const mode of ["completion", "chat", "completion"] as const) await createApp(world, prng, mode);
  await createApp(world, prng, "completion", creator.caller, "workflow");
  return world;
}

/**
 * A key limited from its creation, so that every process's cached lookup of it has the limit and
 * reserves against it (a limit added later applies in the other process only after up to 5 s, and
 * the calls it serves meanwhile are not counted: decision 035). The limit is small, so it is met.
 */
async function newLimitedKey(caller: Caller, prng: Prng): Promise<LimitedKey> {
  const cents = prng.int(60, 200);
  const reset = prng.pick(["daily", "monthly", "never"] as const);
  const sentAt = Date.now();
  const created = await caller.api("POST", "/api/keys/", {
    body: { name: "attack limited", spend_limit_cents: cents, limit_reset: reset },
  });
  if (created.status !== 201)
    throw new Error(`limited API key: ${created.status} ${JSON.stringify(created.body)}`);
  return {
    id: created.body.id,
    key: created.body.key,
    reset,
    limits: [{ cents, sentAt, doneAt: Date.now() }],
    inFlight: 0,
    started: 0,
    lastEndedAt: 0,
  };
}

async function person(baseUrl: string, name: string, options: { verified?: boolean } = {}): Promise<Person> {
  const caller = await createCaller(baseUrl, name, options);
  const id = (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;
  return { name, id, caller, apiKey: await newApiKey(caller) };
}

export async function newApiKey(caller: Caller): Promise<{ id: string; key: string }> {
  const created = await caller.api("POST", "/api/keys/", { body: { name: "attack" } });
  if (created.status !== 201) throw new Error(`API key: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.id, key: created.body.key };
}

/**
 * A live public app with a plan of a few included calls: a prompt app on the scripted model, or a
 * workflow app on the loopback webhook (its runs answer in the completion shape).
 */
export async function createApp(
  world: World,
  prng: Prng,
  mode: "completion" | "chat",
  caller: Caller = world.creator.caller,
  kind: AttackApp["kind"] = "prompt",
): Promise<AttackApp> {
  const cents = prng.int(5, 40);
  const label = `${kind === "workflow" ? "flow" : "app"}-${world.apps.length + 1}`;
  const sentAt = Date.now();
  const created = await caller.api("POST", "/api/app/", {
    body:
      kind === "workflow"
        ? {
            name: `Attack ${label}`,
            visibility: "public",
            price_cents: cents,
            type: "workflow",
            // Creating a workflow app asks for these; its provider (the webhook) is set next.
            provider_config: { app_id: "attack-flow", api_key: "attack-flow-key" },
          }
        : // Priced once its prompt is set: 5¢ is below the starter model's floor (issue 32).
          // Tools allowed, so an oversized tools array reaches the input bound (decision 063).
          { name: `Attack ${label}`, visibility: "public", interaction_mode: mode, allow_tools: true },
  });
  if (created.status !== 201)
    throw new Error(`create app: ${created.status} ${JSON.stringify(created.body)}`);
  const slug = created.body.slug as string;
  await expectOk(
    kind === "workflow"
      ? caller.api("PATCH", `/api/app/${slug}/workflow/`, {
          body: { provider: "webhook", provider_config: { url: world.hookUrl } },
        })
      : caller.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo", max_tokens: 64 } }),
  );
  // A draft's price changes at once, and nobody can call it before it is live.
  if (kind === "prompt")
    await expectOk(caller.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: cents } }));
  await expectOk(caller.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }));
  const app: AttackApp = {
    kind,
    label,
    id: created.body.id,
    slug,
    mode,
    prices: [{ cents, sentAt, doneAt: sentAt }],
    planIds: [],
  };
  for (let i = 0; i < prng.int(1, 2); i++) {
    const plan = await caller.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: `Plan ${i + 1}`, price_cents: prng.int(100, 150), included_calls: prng.int(2, 4) },
    });
    if (plan.status !== 201) throw new Error(`create plan: ${plan.status} ${JSON.stringify(plan.body)}`);
    app.planIds.push(plan.body.id);
  }
  world.apps.push(app);
  return app;
}

async function expectOk(answer: Promise<{ status: number; body: unknown }>): Promise<void> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`setup call failed: ${status} ${JSON.stringify(body)}`);
}

/** The most an app's price could have looked to a caller at `at`: the price in force, or one being set. */
export function highestVisiblePrice(app: AttackApp, at: number): number {
  let inForce = app.prices[0]?.cents ?? 0;
  let highest = 0;
  for (const change of app.prices) {
    if (change.doneAt <= at) inForce = change.cents;
    else if (change.sentAt <= at) highest = Math.max(highest, change.cents);
  }
  return Math.max(highest, inForce);
}

/**
 * The highest price a process could have charged or reserved in [from, until]: any price in force
 * in that window, or being set in it. (`from` should allow for a process's cached price.)
 */
export function highestPriceIn(app: AttackApp, from: number, until: number): number {
  let highest = 0;
  app.prices.forEach((change, i) => {
    const next = app.prices[i + 1];
    if (change.sentAt <= until && (next === undefined || next.doneAt >= from))
      highest = Math.max(highest, change.cents);
  });
  return highest;
}

/** Every price the app had up to `until` (a charge must be one of them). */
export function pricesUntil(app: AttackApp, until: number): number[] {
  return app.prices.filter((change) => change.sentAt <= until).map((change) => change.cents);
}
