import { type Caller, createCaller, fundWallet } from "../caller.ts";
import type { Prng } from "./prng.ts";

/** A person of the attack: signed up through the real issuer, calling with an API key. */
export interface Person {
  name: string;
  id: string;
  caller: Caller;
  apiKey: { id: string; key: string };
}

/** A price the creator set: asked at `sentAt`, in force (answered 200) from `doneAt`. */
export interface PriceChange {
  cents: number;
  sentAt: number;
  doneAt: number;
}

export interface AttackApp {
  label: string;
  id: string;
  slug: string;
  mode: "completion" | "chat";
  prices: PriceChange[];
  planIds: string[];
  /** When the creator's DELETE answered 2xx (the app is gone or archived from then on). */
  removedAt?: number;
}

export interface World {
  creator: Person;
  consumers: Person[];
  apps: AttackApp[];
}

/** Starting wallets: comfortable, modest, and one that runs dry (402s, plans it cannot buy). */
const WALLETS_CENTS = [4000, 2500, 1200, 300];

export async function createWorld(baseUrl: string, prng: Prng): Promise<World> {
  const creator = await person(baseUrl, "creator");
  const consumers: Person[] = [];
  for (const [i, cents] of WALLETS_CENTS.entries()) {
    const consumer = await person(baseUrl, `consumer-${i + 1}`);
    await fundWallet(consumer.caller, cents);
    consumers.push(consumer);
  }
  const world: World = { creator, consumers, apps: [] };
  for (const mode of ["completion", "chat", "completion"] as const) await createApp(world, prng, mode);
  return world;
}

async function person(baseUrl: string, name: string): Promise<Person> {
  const caller = await createCaller(baseUrl, name);
  const id = (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;
  return { name, id, caller, apiKey: await newApiKey(caller) };
}

export async function newApiKey(caller: Caller): Promise<{ id: string; key: string }> {
  const created = await caller.api("POST", "/api/keys/", { body: { name: "attack" } });
  if (created.status !== 201) throw new Error(`API key: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.id, key: created.body.key };
}

/** A live public prompt app on the scripted model, with a plan of a few included calls. */
export async function createApp(
  world: World,
  prng: Prng,
  mode: "completion" | "chat",
  caller: Caller = world.creator.caller,
): Promise<AttackApp> {
  const cents = prng.int(5, 40);
  const label = `app-${world.apps.length + 1}`;
  const sentAt = Date.now();
  const created = await caller.api("POST", "/api/app/", {
    body: { name: `Attack ${label}`, visibility: "public", price_cents: cents, interaction_mode: mode },
  });
  if (created.status !== 201)
    throw new Error(`create app: ${created.status} ${JSON.stringify(created.body)}`);
  const slug = created.body.slug as string;
  await expectOk(
    caller.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo", max_tokens: 64 } }),
  );
  await expectOk(caller.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }));
  const app: AttackApp = {
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

/** Every price the app had up to `until` (a charge must be one of them). */
export function pricesUntil(app: AttackApp, until: number): number[] {
  return app.prices.filter((change) => change.sentAt <= until).map((change) => change.cents);
}
