import { and, eq, sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { appLabelMoves, applications, invocations } from "../../db/schema/index.ts";
import { useWorkflowWorld } from "../../test/workflow-world.ts";

// Workflow apps release their provider configuration like prompt apps release versions
// (docs/decisions/060): a live app's save changes nothing for callers until promoted; callers pin
// a version or a label; every answer names its version. The loopback webhook (test/fake-providers.ts)
// shows which configuration answered: each version sends its own bearer token.
const world = useWorkflowWorld();
beforeEach(() => world.providers.set("ok"));

/** A live, priced webhook app whose production version sends `Bearer tok-one`. */
async function liveHook(price_cents = 30) {
  const created = await world.creator.api("POST", "/api/app/", {
    body: {
      name: `Hook ${Math.random().toString(36).slice(2, 7)}`,
      type: "workflow",
      visibility: "public",
      price_cents,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const slug = created.body.slug as string;
  const saved = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: {
      provider: "webhook",
      provider_config: { url: `${world.providers.url}/hook`, bearer_token: "tok-one" },
      changelog: "On our webhook",
    },
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  // A draft's save moves production: nobody calls it yet.
  expect(saved.body).toMatchObject({ current_version: 2, production_version: 2 });
  const live = await world.creator.api("PATCH", `/api/app/${slug}/update_status/`, {
    body: { status: "live" },
  });
  expect(live.status).toBe(200);
  return { slug, workflowId: saved.body.id as string };
}

/** A Dify-style call (the Dify completion route), pinned with the header when `pin` is given. */
async function call(slug: string, pin?: string, user = "wf-u1") {
  const before = world.providers.requests.length;
  const response = await world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: world.consumerKey,
    body: { inputs: {}, query: "hello", response_mode: "blocking", user },
    headers: pin ? { "promptmint-version": pin } : {},
  });
  const upstream = world.providers.requests.slice(before).filter((r) => r.path === "/hook");
  return { response, tokens: upstream.map((r) => r.headers.authorization) };
}

/**
 * The consumer's money, held or not: a lease's unspent rest moves from held to the balance whenever
 * its sweep runs, which a call that charged nothing must not be blamed for.
 */
const wallet = async () => {
  const { balance_micros, held_micros } = (await world.consumer.api("GET", "/api/wallet/")).body;
  return (balance_micros as number) + (held_micros as number);
};

describe("workflow versions and labels", () => {
  it("keeps callers on production while a live app is edited, until promoted; a rollback is one move", async () => {
    const { slug, workflowId } = await liveHook();
    const first = await call(slug);
    expect(first.response.status, JSON.stringify(first.response.body)).toBe(200);
    expect(first.tokens).toEqual(["Bearer tok-one"]);
    expect(first.response.headers.get("promptmint-version")).toBe("v2");

    const saved = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
      body: {
        provider_config: { url: `${world.providers.url}/hook`, bearer_token: "tok-two" },
        changelog: "New token",
      },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      current_version: 3,
      production_version: 2,
      provider_config: { bearer_token: "••••-two" },
    });
    expect(saved.body.labels.map((l: { name: string; version: number }) => [l.name, l.version])).toEqual([
      ["production", 2],
      ["latest", 3],
    ]);
    const stillOld = await call(slug);
    expect(stillOld.tokens).toEqual(["Bearer tok-one"]);
    expect(stillOld.response.headers.get("promptmint-version")).toBe("v2");

    // Promote by moving the label: callers get v3 at once, and the move is audited.
    const promoted = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/production`, {
      body: { version: 3, reason: "token rotated" },
    });
    expect(promoted.status, JSON.stringify(promoted.body)).toBe(200);
    expect(promoted.body.moves[0]).toMatchObject({
      name: "production",
      from_version: 2,
      to_version: 3,
      reason: "token rotated",
      actor_name: expect.any(String),
    });
    const released = await call(slug);
    expect(released.tokens).toEqual(["Bearer tok-two"]);
    expect(released.response.headers.get("promptmint-version")).toBe("v3");

    // Rollback: production back to v2, no new version.
    const back = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/production`, {
      body: { version: 2 },
    });
    expect(back.body.labels.find((l: { name: string }) => l.name === "production").version).toBe(2);
    expect(
      back.body.moves
        .slice(0, 2)
        .map((m: { from_version: number; to_version: number }) => [m.from_version, m.to_version]),
    ).toEqual([
      [3, 2],
      [2, 3],
    ]);
    const rolledBack = await call(slug);
    expect(rolledBack.tokens).toEqual(["Bearer tok-one"]);
    expect(rolledBack.response.headers.get("promptmint-version")).toBe("v2");

    const versions = await world.creator.api("GET", `/api/workflows/${workflowId}/versions/`);
    expect(
      versions.body.map((v: { version: number; labels: string[]; is_active: boolean }) => [
        v.version,
        v.labels,
        v.is_active,
      ]),
    ).toEqual([
      [3, ["latest"], false],
      [2, ["production"], true],
      [1, [], false],
    ]);
    expect(versions.body[0]).toMatchObject({ author_name: expect.any(String), changelog: "New token" });
    // Secrets stay masked in every version.
    expect(JSON.stringify(versions.body)).not.toMatch(/tok-one|tok-two|app-dify-key-9999/);

    // Each call records the version that answered it.
    const recorded = await world.server.database.db
      .select({ version: invocations.appVersion })
      .from(invocations)
      .innerJoin(applications, eq(applications.id, invocations.applicationId))
      .where(and(eq(applications.slug, slug), eq(invocations.status, "success")))
      .orderBy(invocations.createdAt);
    expect(recorded.map((r) => r.version)).toEqual([2, 2, 3, 2]);
  });

  it("a save with promote: true moves production at once", async () => {
    const { slug, workflowId } = await liveHook();
    const saved = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
      body: {
        provider_config: { url: `${world.providers.url}/hook`, bearer_token: "tok-now" },
        promote: true,
        changelog: "Hotfix",
      },
    });
    expect(saved.body).toMatchObject({ current_version: 3, production_version: 3 });
    const answer = await call(slug);
    expect(answer.tokens).toEqual(["Bearer tok-now"]);
    expect(answer.response.headers.get("promptmint-version")).toBe("v3");
    const moves = await world.server.database.db
      .select()
      .from(appLabelMoves)
      .where(
        eq(appLabelMoves.applicationId, sql`(select application_id from workflows where id = ${workflowId})`),
      )
      .orderBy(appLabelMoves.createdAt);
    expect(moves.map((m) => [m.name, m.fromVersion, m.toVersion, m.reason])).toEqual([
      ["production", 1, 2, "Saved before the app went live"],
      ["production", 2, 3, "Hotfix"],
    ]);
  });

  it("pins a version or a label by header through the Dify routes; an unknown pin is a 404 with nothing charged", async () => {
    const { slug, workflowId } = await liveHook();
    await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
      body: { provider_config: { url: `${world.providers.url}/hook`, bearer_token: "tok-new" } },
    });
    const byNumber = await call(slug, "v3");
    expect(byNumber.response.status).toBe(200);
    expect(byNumber.tokens).toEqual(["Bearer tok-new"]);
    expect(byNumber.response.headers.get("promptmint-version")).toBe("v3");
    const byLatest = await call(slug, "latest");
    expect(byLatest.tokens).toEqual(["Bearer tok-new"]);

    const labelled = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/staging`, {
      body: { version: 3 },
    });
    expect(labelled.status).toBe(200);
    const byLabel = await call(slug, "staging");
    expect(byLabel.tokens).toEqual(["Bearer tok-new"]);
    expect(byLabel.response.headers.get("promptmint-version")).toBe("v3");
    const old = await call(slug, "2");
    expect(old.tokens).toEqual(["Bearer tok-one"]);

    // The workflow run route (Dify's /workflows/run) takes the header too.
    const run = await world.consumer.api("POST", `/api/app/${slug}/workflows/run`, {
      auth: world.consumerKey,
      body: { inputs: { topic: "x" }, response_mode: "blocking", user: "wf-u2" },
      headers: { "promptmint-version": "v3" },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.headers.get("promptmint-version")).toBe("v3");

    const balance = await wallet();
    const requests = world.providers.requests.length;
    for (const [pin, message] of [
      ["v99", "This app has no version v99"],
      ["canary", "This app has no label canary"],
    ]) {
      const missing = await call(slug, pin);
      expect(missing.response.status).toBe(404);
      expect(missing.response.body).toMatchObject({ code: "version_not_found", message });
    }
    const malformed = await call(slug, "Not A Label!");
    expect(malformed.response.status).toBe(400);
    expect(malformed.response.body.fields).toHaveProperty(["Promptmint-Version header"]);
    expect(world.providers.requests.length).toBe(requests);
    expect(await wallet()).toEqual(balance);

    // Removing the label makes its pin unknown again; the removal is audited.
    const removed = await world.creator.api("DELETE", `/api/workflows/${workflowId}/labels/staging`);
    expect(removed.body.moves[0]).toMatchObject({ name: "staging", from_version: 3, to_version: null });
    expect((await call(slug, "staging")).response.status).toBe(404);
  });

  it("guards the labels: latest and production cannot be removed or hand-moved, an unknown version is a 404, strangers see nothing", async () => {
    const { workflowId } = await liveHook();
    const latest = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/latest`, {
      body: { version: 1 },
    });
    expect(latest.status).toBe(400);
    expect(latest.body.fields).toHaveProperty("name");
    const production = await world.creator.api("DELETE", `/api/workflows/${workflowId}/labels/production`);
    expect(production.status).toBe(400);
    const unknown = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/production`, {
      body: { version: 42 },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("version_not_found");
    const badName = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/Bad_Name`, {
      body: { version: 1 },
    });
    expect(badName.status).toBe(400);
    const stranger = await world.consumer.api("GET", `/api/workflows/${workflowId}/labels/`);
    expect(stranger.status).toBe(404);
    const moved = await world.consumer.api("PUT", `/api/workflows/${workflowId}/labels/production`, {
      body: { version: 1 },
    });
    expect(moved.status).toBe(404);
  });

  it("a restore of a live app is a new latest version that callers get only when promoted", async () => {
    const { slug, workflowId } = await liveHook();
    await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
      body: {
        provider_config: { url: `${world.providers.url}/hook`, bearer_token: "tok-bad" },
        promote: true,
      },
    });
    const versions = await world.creator.api("GET", `/api/workflows/${workflowId}/versions/`);
    const v2 = versions.body.find((v: { version: number }) => v.version === 2);
    const restored = await world.creator.api("POST", `/api/workflows/${workflowId}/versions/`, {
      body: { version_id: v2.id },
    });
    expect(restored.body).toMatchObject({ current_version: 4, production_version: 3 });
    expect((await call(slug)).tokens).toEqual(["Bearer tok-bad"]);
    const promoted = await world.creator.api("POST", `/api/workflows/${workflowId}/versions/`, {
      body: { version_id: v2.id, promote: true },
    });
    expect(promoted.body).toMatchObject({ current_version: 5, production_version: 5 });
    expect((await call(slug)).tokens).toEqual(["Bearer tok-one"]);
  });
});
