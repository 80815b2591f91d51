// A new user's first hour in one run, against a server already started (`BASE_URL`, default
// http://localhost:3000): a creator signs up through the embedded issuer, publishes a priced app,
// a consumer signs up, tops up with the sandbox test card, makes an API key and calls the app.
// Exits 1 unless the call is answered and the consumer was charged its price exactly once.
// CI runs it with the oldest Node.js the README promises (scripts/ci-minimum-node.mjs).
import { callerAt, createCaller, fundWallet } from "../test/caller.ts";

const baseUrl = (process.env.BASE_URL ?? "http://localhost:3000").replace(/\/+$/, "");
const PRICE_CENTS = 10;

const creator = await createCaller(baseUrl, "First Creator");
const created = await creator.api("POST", "/api/app/", {
  body: {
    name: "First Haiku",
    interaction_mode: "completion",
    visibility: "public",
    price_cents: PRICE_CENTS,
  },
});
expectOk("create app", created.status, created.body);
const slug = created.body.slug as string;
const prompt = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
  body: { model: "gpt-4-turbo", max_tokens: 64 },
});
expectOk("save prompt", prompt.status, prompt.body);
const live = await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
expectOk("publish", live.status, live.body);

const consumer = await createCaller(baseUrl, "First Consumer");
const funded = await fundWallet(consumer, 100);
const key = await consumer.api("POST", "/api/keys/", { body: { name: "first" } });
expectOk("create key", key.status, key.body);

const started = performance.now();
const answer = await callerAt(baseUrl, consumer).api("POST", `/api/app/${slug}/completion-messages`, {
  auth: key.body.key,
  body: { inputs: { query: "a pond at dawn" }, response_mode: "blocking", user: "first" },
});
expectOk("paid call", answer.status, answer.body);
const wallet = await consumer.api("GET", "/api/wallet/");
const spent = funded - (wallet.body.balance_micros + wallet.body.held_micros);
if (spent !== PRICE_CENTS * 10_000 || typeof answer.body.answer !== "string")
  fail(`expected one charge of ${PRICE_CENTS}¢, the wallet moved by ${spent} micro-dollars`);
console.log(
  `first paid call on Node ${process.version}: answered in ${Math.round(performance.now() - started)} ms, charged ${PRICE_CENTS}¢ once`,
);

function expectOk(step: string, status: number, body: unknown) {
  if (status < 200 || status > 299) fail(`${step}: HTTP ${status} ${JSON.stringify(body)}`);
}

function fail(message: string): never {
  console.error(`first paid call failed: ${message}`);
  process.exit(1);
}
