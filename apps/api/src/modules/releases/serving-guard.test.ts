import { beforeEach, describe, expect, it } from "vitest";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// Every price change and every experiment start judges every version that serves paid calls
// (docs/decisions/063): each running experiment's arm and each pinnable label by the price guard,
// each arm by the eval gate; a refusal names the arm or label.
const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Serving Guard Creator");

beforeEach(() => vendor.set({ kind: "scripted" }));

/** A live app at 25¢ whose production is v2 (gpt-4-turbo, 256 tokens out), with a saved v3 on gpt-4 with 1000 tokens out. */
async function liveApp() {
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 25 },
    { model: "gpt-4-turbo", max_tokens: 256, prompt_template: "first: {{query}}", changelog: "v2" },
  );
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { model: "gpt-4", max_tokens: 1000, prompt_template: "second: {{query}}" },
  });
  expect(saved.status).toBe(200);
  const config = await creator.api("GET", `/api/app/${slug}/prompt/`);
  expect(config.body).toMatchObject({ production_version: 2, current_version: 3 });
  return { slug, promptId: config.body.id as string };
}

const startBoth = (promptId: string) =>
  creator.api("POST", `/api/prompts/${promptId}/experiments/`, {
    body: {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    },
  });

describe("every version that serves is judged", () => {
  it("refuses a price cut that an experiment's arm would not be covered by, naming the arm", async () => {
    const { slug, promptId } = await liveApp();
    expect((await startBoth(promptId)).status).toBe(201);
    // gpt-4 with 1000 tokens out costs more than 6¢'s 5.4¢ share; production alone would fit.
    const cut = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 6 } });
    expect(cut.status).toBe(400);
    expect(cut.body.fields.price_cents).toContain("The running experiment's arm v3 would not be covered");
    expect((await creator.api("GET", `/api/app/${slug}/`)).body.price_cents).toBe(25);
    // A plan whose share per included call the arm's worst case exceeds is refused the same way.
    const plan = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Cheap", price_cents: 500, included_calls: 100 },
    });
    expect(plan.status).toBe(400);
    expect(plan.body.fields.price_cents).toContain("arm v3");
  });

  it("refuses a price cut that would leave a pinnable label uncovered, naming the label", async () => {
    const { slug, promptId } = await liveApp();
    const labelled = await creator.api("PUT", `/api/prompts/${promptId}/labels/beta`, {
      body: { version: 3 },
    });
    expect(labelled.status).toBe(200);
    const cut = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 6 } });
    expect(cut.status).toBe(400);
    expect(cut.body.fields.price_cents).toContain("The label 'beta' (v3) would not be covered");
    // Without the label (moved to production's version), the same cut passes.
    await creator.api("PUT", `/api/prompts/${promptId}/labels/beta`, { body: { version: 2 } });
    expect((await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 6 } })).status).toBe(200);
  });

  it("refuses starting an experiment with an arm that never passed an eval when the gate is on, naming the arm", async () => {
    const { promptId } = await liveApp();
    const gate = await creator.api("PATCH", `/api/prompts/${promptId}/evals/settings`, {
      body: { require_passing_eval: true },
    });
    expect(gate.status).toBe(200);
    const refused = await startBoth(promptId);
    expect(refused.status).toBe(409);
    expect(refused.body.fields["arms.1.version"]).toContain("Arm v3 cannot serve paid calls");
    expect(refused.body.message).toContain("no passing eval run");
    // With the gate off the same start is accepted.
    await creator.api("PATCH", `/api/prompts/${promptId}/evals/settings`, {
      body: { require_passing_eval: false },
    });
    expect((await startBoth(promptId)).status).toBe(201);
  });
});
