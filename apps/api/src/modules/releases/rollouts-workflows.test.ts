import http from "node:http";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appLabelMoves, applications, experiments, workflows } from "../../db/schema/index.ts";
import { listenOnLoopback } from "../../test/loopback.ts";
import { useWorkflowWorld } from "../../test/workflow-world.ts";
import { productionOf } from "./labels.ts";
import { stepRollout } from "./rollouts.service.ts";

// Guarded rollouts of workflow apps (docs/decisions/077): the same routes and stepper as prompt
// apps, under `/workflows/{id}/rollouts`, the candidate a version of the provider configuration.
const world = useWorkflowWorld({ GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" });
const FEE = { feePercent: 10 };

/** One provider app on loopback speaking our webhook contract; `failing` answers 500 every time. */
async function hookServer(name: string, failing = false) {
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : {};
      res.writeHead(failing ? 500 : 200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          failing
            ? { message: `${name} is down` }
            : { answer: `${name}: ${body.query}`, usage: { input_tokens: 3, output_tokens: 5 } },
        ),
      );
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}/run`, close };
}

let steady: Awaited<ReturnType<typeof hookServer>>;
let broken: Awaited<ReturnType<typeof hookServer>>;
beforeAll(async () => {
  steady = await hookServer("steady");
  broken = await hookServer("broken", true);
});
afterAll(async () => {
  await steady?.close();
  await broken?.close();
});

/** A live workflow app: production v2 (steady), v3 saved on `candidateUrl`, not released. */
async function liveWorkflowApp(candidateUrl: string) {
  const created = await world.creator.api("POST", "/api/app/", {
    body: {
      name: `Rollout flow ${Math.random().toString(36).slice(2, 7)}`,
      type: "workflow",
      visibility: "public",
      price_cents: 30,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  const first = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider: "webhook", provider_config: { url: steady.url, bearer_token: "tok-steady" } },
  });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  const live = await world.creator.api("PATCH", `/api/app/${slug}/update_status/`, {
    body: { status: "live" },
  });
  expect(live.status).toBe(200);
  const second = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider_config: { url: candidateUrl, bearer_token: "tok-2" }, changelog: "candidate" },
  });
  expect(second.body).toMatchObject({ current_version: 3, production_version: 2 });
  const [app] = await world.server.database.db.select().from(applications).where(eq(applications.slug, slug));
  if (!app) throw new Error("no app");
  return { slug, workflowId: second.body.id as string, app };
}

function call(slug: string, user: string) {
  return world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: world.consumerKey,
    body: { inputs: {}, query: "hello", response_mode: "blocking", user },
  });
}

async function callUntilCandidate(slug: string, prefix: string, each: number) {
  let onCandidate = 0;
  for (let i = 0; i < 300 && onCandidate < each; i++)
    if ((await call(slug, `${prefix}-${i}`)).headers.get("promptmint-version") === "v3") onCandidate += 1;
  return onCandidate;
}

const production = async (workflowId: string) => {
  const db = world.server.database.db;
  const [row] = await db
    .select({ app: workflows.applicationId })
    .from(workflows)
    .where(eq(workflows.id, workflowId));
  return (await productionOf(db, row?.app ?? ""))?.version;
};

describe("workflow rollouts", () => {
  it("advances and completes: the workflow's production moves to the candidate with an audited move", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp(steady.url);
    const started = await world.creator.api("POST", `/api/workflows/${workflowId}/rollouts`, {
      body: { version: 3, steps: [50, 100], step_minutes: 1, bounds: { max_error_rate: 0.1, min_calls: 2 } },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({ app_kind: "workflow", rollout: { from_version: 2, to_version: 3 } });
    expect(await callUntilCandidate(slug, "wf", 2)).toBe(2);
    const later = { ...FEE, now: () => new Date(Date.now() + 2 * 60_000) };
    expect(await stepRollout(world.server.database.db, app, started.body.id, later)).toBe("completed");
    expect(await production(workflowId)).toBe(3);
    const [move] = await world.server.database.db
      .select()
      .from(appLabelMoves)
      .where(eq(appLabelMoves.applicationId, app.id))
      .orderBy(desc(appLabelMoves.createdAt))
      .limit(1);
    expect(move).toMatchObject({ name: "production", fromVersion: 2, toVersion: 3 });
    expect(move?.reason).toMatch(/Rollout completed/);
    expect((await call(slug, "after")).headers.get("promptmint-version")).toBe("v3");
  });

  it("rolls back by itself when the candidate provider fails, and is stopped by its creator", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp(broken.url);
    const started = await world.creator.api("POST", `/api/workflows/${workflowId}/rollouts`, {
      body: { version: 3, steps: [50, 100], bounds: { max_error_rate: 0.1, min_calls: 2 } },
    });
    expect(started.status).toBe(201);
    await callUntilCandidate(slug, "wf-broken", 2);
    expect(await stepRollout(world.server.database.db, app, started.body.id, FEE)).toBe("rolled_back");
    const [row] = await world.server.database.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, started.body.id));
    expect(row?.endReason).toMatch(/v3's error rate 100\.0% is above 10\.0%/);
    expect(await production(workflowId)).toBe(2);

    const again = await world.creator.api("POST", `/api/workflows/${workflowId}/rollouts`, {
      body: { version: 3, bounds: {} },
    });
    expect(again.status).toBe(201);
    const stopped = await world.creator.api("POST", `/api/workflows/${workflowId}/rollouts/current/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body.rollout).toMatchObject({ status: "stopped" });
    expect(await production(workflowId)).toBe(2);
  });
});
