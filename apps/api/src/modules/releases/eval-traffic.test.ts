import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { evalCaseSources, invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useFakeOpenAi, useTestServer } from "../../test/use-test-server.ts";

// Eval traffic apart from customer traffic (docs/decisions/078): an eval run's calls are recorded
// with their purpose and leave the app's analytics as they were; the owner's own calls are owner_test; a
// customer call moves them. And a customer call saved as an eval case.
const vendor = useFakeOpenAi();
const server = useTestServer(() => ({
  env: {
    OPENAI_API_KEY: "sk-vendor",
    OPENAI_BASE_URL: vendor.baseUrl,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "10000",
  },
}));
const creator = useCaller(server, "Traffic Creator");
const stranger = useCaller(server, "Traffic Stranger");
let consumer: Awaited<ReturnType<typeof createCaller>>;
let chat: { slug: string; appId: string; promptId: string; version: number };

beforeAll(async () => {
  await fundWallet(creator, 1000);
  consumer = await createCaller(server.baseUrl, "Traffic Customer");
  await fundWallet(consumer, 1000);
  const { slug, id } = await createLiveApp(
    creator,
    { price_cents: 25, interaction_mode: "chat" },
    { model: "gpt-4-turbo", max_tokens: 100, prompt_template: "first: {{query}}" },
  );
  const config = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body;
  chat = { slug, appId: id, promptId: config.id, version: config.active_version.version };
});

/** What the app's and the owner's analytics say today (7 days). */
async function figures(slug: string) {
  const usage = (await creator.api("GET", `/api/app/${slug}/analytics/usage/?days=7`)).body;
  const dashboard = (await creator.api("GET", "/api/analytics/dashboard/?days=7")).body;
  const listed = dashboard.applications.find(
    (a: { application_slug: string }) => a.application_slug === slug,
  );
  const ownerFigures = (await creator.api("GET", "/api/analytics/figures/?days=7")).body;
  const recent = (await creator.api("GET", `/api/app/${slug}/analytics/invocations/?limit=50`)).body
    .recent_invocations;
  return {
    calls: usage.total_invocations as number,
    users: usage.summary.total_users as number,
    revenue: usage.total_revenue as number,
    dashboardCalls: dashboard.overview.total_invocations as number,
    dashboardUsers: dashboard.overview.total_users as number,
    appRow: listed?.invocations ?? 0,
    // Per version (app_version_daily_stats) and the owner's money figures.
    versions: JSON.stringify(usage.by_version),
    ownerFigures: JSON.stringify(ownerFigures),
    recent: recent.map((r: { id: string }) => r.id) as string[],
  };
}

async function purposes(appId: string) {
  const rows = await server.database.db
    .select({ id: invocations.id, purpose: invocations.purpose })
    .from(invocations)
    .where(eq(invocations.applicationId, appId));
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.purpose] = (counts[r.purpose] ?? 0) + 1;
  return { rows, counts };
}

const customerCall = (query: string, user: string) =>
  consumer.api("POST", `/api/app/${chat.slug}/chat-messages`, {
    body: { query, user, inputs: {}, response_mode: "blocking" },
  });

describe("eval and test traffic", () => {
  it("an eval run leaves the app's analytics (calls, users, revenue, versions, recent calls) unchanged; a customer call moves them", async () => {
    const empty = await figures(chat.slug);
    expect(empty).toMatchObject({ calls: 0, users: 0, revenue: 0, dashboardCalls: 0, recent: [] });

    // A customer call: one call, one user, its price.
    const first = await customerCall("hello", "alice");
    expect(first.status).toBe(200);
    const afterCustomer = await figures(chat.slug);
    expect(afterCustomer).toMatchObject({
      calls: 1,
      users: 1,
      revenue: 0.25,
      dashboardCalls: 1,
      dashboardUsers: 1,
      appRow: 1,
    });
    expect(afterCustomer.recent).toEqual([first.body.message_id]);

    // An eval run of two cases (each an owner's call of the app), Test Prompt, and the owner's
    // own gateway call with an end user of their own.
    const evals = `/api/prompts/${chat.promptId}/evals`;
    for (const [name, query] of [
      ["greets", "hello"],
      ["thanks", "thanks"],
    ])
      expect(
        (
          await creator.api("POST", `${evals}/cases`, {
            body: { name, inputs: {}, query, assertions: [{ kind: "contains", value: `first: ${query}` }] },
          })
        ).status,
      ).toBe(201);
    const run = await creator.api("POST", `${evals}/runs`, { body: { version: chat.version } });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ status: "passed", cases: 2, passed: 2 });
    // The eval run's calls are in none of the figures.
    expect(await figures(chat.slug)).toEqual(afterCustomer);

    const tested = await creator.api("POST", `/api/app/${chat.slug}/prompt/test-config/`, {
      body: { prompt_template: "first: {{query}}", test_inputs: { query: "try me" } },
    });
    expect(tested.status).toBe(200);
    expect(tested.body.run.invocation_id).toEqual(expect.any(String));
    const own = await creator.api("POST", `/api/app/${chat.slug}/chat-messages`, {
      body: { query: "mine", user: "owner-user", inputs: {}, response_mode: "blocking" },
    });
    expect(own.status).toBe(200);

    // Recorded, each with its purpose: the owner's own calls stay in the analytics as before
    // (owner_test), only eval traffic is left out (decision 078).
    const { rows, counts } = await purposes(chat.appId);
    expect(counts).toEqual({ customer: 1, eval: 2, owner_test: 2 });
    const byId = new Map(rows.map((r) => [r.id, r.purpose]));
    expect(byId.get(tested.body.run.invocation_id)).toBe("owner_test");
    expect(byId.get(own.body.message_id)).toBe("owner_test");
    expect(byId.get(first.body.message_id)).toBe("customer");

    // Another customer call, by another user, moves them by one call and its price.
    const before = await figures(chat.slug);
    const second = await customerCall("again", "bob");
    expect(second.status).toBe(200);
    const after = await figures(chat.slug);
    expect(after.calls).toBe(before.calls + 1);
    expect(after.revenue).toBeCloseTo(before.revenue + 0.25, 6);
    expect(after.recent[0]).toBe(second.body.message_id);
  });
});

describe("a live call saved as an eval case", () => {
  const fromCall = (promptId = chat.promptId) => `/api/prompts/${promptId}/evals/cases/from-call`;

  it("keeps the call's inputs and query, its answer as the rubric's reference, its date and cost in the name; once", async () => {
    const call = await customerCall("tell me about bees", "carol");
    expect(call.status).toBe(200);
    const id = call.body.message_id as string;
    const [recent] = (await creator.api("GET", `/api/app/${chat.slug}/analytics/invocations/?limit=1`)).body
      .recent_invocations;
    expect(recent).toMatchObject({ id, content_kept: true });

    const saved = await creator.api("POST", fromCall(), { body: { invocation_id: id } });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ inputs: {}, query: "tell me about bees" });
    expect(saved.body.name).toMatch(
      new RegExp(`^Live call ${id.slice(0, 8)} of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(model cost \\$`),
    );
    expect(saved.body.assertions).toHaveLength(1);
    expect(saved.body.assertions[0].kind).toBe("rubric");
    expect(saved.body.assertions[0].rubric).toContain(`“${call.body.answer}”`);
    expect(call.body.answer).toContain("first: tell me about bees");
    // It is one of the app's cases, and remembered as this call's.
    const cases = (await creator.api("GET", `/api/prompts/${chat.promptId}/evals/cases`)).body.cases;
    expect(cases.map((c: { id: string }) => c.id)).toContain(saved.body.id);
    const sources = await server.database.db
      .select()
      .from(evalCaseSources)
      .where(eq(evalCaseSources.invocationId, id));
    expect(sources).toMatchObject([{ caseId: saved.body.id, applicationId: chat.appId }]);

    // Saved again: 409 naming the call; no second case.
    const again = await creator.api("POST", fromCall(), { body: { invocation_id: id } });
    expect(again.status).toBe(409);
    expect(again.body.fields).toEqual({ invocation_id: "is saved as an eval case already" });
    expect((await creator.api("GET", `/api/prompts/${chat.promptId}/evals/cases`)).body.cases).toHaveLength(
      cases.length,
    );
    // Its case deleted, the call may be saved again.
    expect(
      (await creator.api("DELETE", `/api/prompts/${chat.promptId}/evals/cases/${saved.body.id}`)).status,
    ).toBe(204);
    expect((await creator.api("POST", fromCall(), { body: { invocation_id: id } })).status).toBe(201);
  });

  it("is a 404 for a call that is not a customer call of this app, or an app not the caller's; a 400 for a bad id", async () => {
    const { rows } = await purposes(chat.appId);
    const ownerTest = rows.find((r) => r.purpose === "owner_test");
    const evalCall = rows.find((r) => r.purpose === "eval");
    const customer = rows.find((r) => r.purpose === "customer");
    for (const id of [ownerTest?.id, evalCall?.id, crypto.randomUUID()]) {
      const answer = await creator.api("POST", fromCall(), { body: { invocation_id: id } });
      expect(answer.status).toBe(404);
    }
    // A customer call of this app, asked by someone else (or under another of their apps): 404.
    expect((await stranger.api("POST", fromCall(), { body: { invocation_id: customer?.id } })).status).toBe(
      404,
    );
    const other = await createLiveApp(
      creator,
      { price_cents: 25, interaction_mode: "chat" },
      { model: "gpt-4-turbo" },
    );
    const otherPrompt = (await creator.api("GET", `/api/app/${other.slug}/prompt/`)).body.id;
    expect(
      (await creator.api("POST", fromCall(otherPrompt), { body: { invocation_id: customer?.id } })).status,
    ).toBe(404);
    const bad = await creator.api("POST", fromCall(), { body: { invocation_id: "not-a-call" } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.fields)).toEqual(["invocation_id"]);
    const extra = await creator.api("POST", fromCall(), { body: { invocation_id: customer?.id, name: "x" } });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("name");
  });

  it("refuses with a 409 saying why a completion call, whose inputs were not kept, cannot be saved", async () => {
    const completion = await createLiveApp(
      creator,
      { price_cents: 25, interaction_mode: "completion" },
      { model: "gpt-4-turbo", prompt_template: "first: {{query}}" },
    );
    const promptId = (await creator.api("GET", `/api/app/${completion.slug}/prompt/`)).body.id;
    const call = await consumer.api("POST", `/api/app/${completion.slug}/completion-messages`, {
      body: { inputs: { query: "hi" }, user: "dave" },
    });
    expect(call.status).toBe(200);
    const [recent] = (await creator.api("GET", `/api/app/${completion.slug}/analytics/invocations/?limit=1`))
      .body.recent_invocations;
    expect(recent).toMatchObject({ id: call.body.message_id, content_kept: false });
    const refused = await creator.api("POST", fromCall(promptId), {
      body: { invocation_id: call.body.message_id },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/inputs were not kept: completion calls keep no content/);
    expect(refused.body.fields).toEqual({ invocation_id: "is a call whose inputs were not kept" });
  });
});
