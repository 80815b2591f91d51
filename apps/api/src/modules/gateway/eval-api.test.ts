import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useFakeOpenAi, useTestServer } from "../../test/use-test-server.ts";

// Evals from the command line (docs/decisions/078): `POST /api/v1/apps/{slug}/evals/runs` with an
// API key of the app's owner, and the CLI (packages/cli) run by Node against this real server.
const vendor = useFakeOpenAi();
const server = useTestServer(() => ({
  env: {
    OPENAI_API_KEY: "sk-vendor",
    OPENAI_BASE_URL: vendor.baseUrl,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "10000",
  },
}));
const creator = useCaller(server, "CI Creator");
const stranger = useCaller(server, "CI Stranger");
const CLI = fileURLToPath(new URL("../../../../../packages/cli/bin/promptmint.mjs", import.meta.url));

let app: { slug: string; promptId: string };
let ownerKey: string;
let strangerKey: string;

beforeAll(async () => {
  await fundWallet(creator, 1000);
  // v1 (the starting prompt) then v2 ("first: …", production), `staging` pointed at v1, v3 saved.
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 25 },
    { model: "gpt-4-turbo", max_tokens: 100, prompt_template: "first: {{query}}" },
  );
  const config = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body;
  app = { slug, promptId: config.id };
  expect(config.active_version.version).toBe(2);
  expect(
    (await creator.api("PUT", `/api/prompts/${app.promptId}/labels/staging`, { body: { version: 1 } }))
      .status,
  ).toBe(200);
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "second: {{query}}" },
  });
  expect(saved.body).toMatchObject({ current_version: 3, production_version: 2 });
  const created = await creator.api("POST", `/api/prompts/${app.promptId}/evals/cases`, {
    body: {
      name: "says first",
      inputs: { query: "hello" },
      assertions: [{ kind: "contains", value: "first: hello" }],
    },
  });
  expect(created.status).toBe(201);
  ownerKey = (await creator.api("POST", "/api/keys/", { body: { name: "ci" } })).body.key;
  strangerKey = (await stranger.api("POST", "/api/keys/", { body: { name: "theirs" } })).body.key;
});

const runs = (slug = app.slug) => `/api/v1/apps/${slug}/evals/runs`;

/** The CLI as CI runs it: its exit code and what it printed. */
function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("POST /api/v1/apps/{slug}/evals/runs", () => {
  it("runs the cases on a version named by number, pin or label with the owner's API key and answers the finished run", async () => {
    const byPin = await creator.api("POST", runs(), { auth: ownerKey, body: { version: "v2", wait: true } });
    expect(byPin.status).toBe(201);
    expect(byPin.body).toMatchObject({
      app: { slug: app.slug },
      version: 2,
      label: null,
      passed: true,
      url: `${server.config.publicUrl}/prompts/${app.slug}/evals?run=${byPin.body.run.id}`,
      run: { status: "passed", cases: 1, passed: 1, version: 2 },
    });
    const results = byPin.body.run.results as { cost_micros: number; judge_cost_micros: number }[];
    expect(results).toHaveLength(1);
    expect(byPin.body.total_cost_micros).toBe(
      (results[0]?.cost_micros ?? 0) + (results[0]?.judge_cost_micros ?? 0),
    );
    expect(byPin.body.total_cost_micros).toBeGreaterThan(0);

    // A label: `staging` is v1 (the app's starting prompt) and `latest` v3 ("second: …"): both fail.
    const staging = await creator.api("POST", runs(), { auth: ownerKey, body: { version: "staging" } });
    expect(staging.body).toMatchObject({ version: 1, label: "staging", passed: false });
    const latest = await creator.api("POST", runs(), { auth: ownerKey, body: { version: "latest" } });
    expect(latest.status).toBe(201);
    expect(latest.body).toMatchObject({
      version: 3,
      label: "latest",
      passed: false,
      run: { status: "failed" },
    });
    const byNumber = await creator.api("POST", runs(), { auth: ownerKey, body: { version: 3 } });
    expect(byNumber.body).toMatchObject({ version: 3, label: null, passed: false });
  });

  it("is a 404 for another owner's key or an unknown app, 401 without a valid key, and a 400 naming a bad field", async () => {
    const theirs = await stranger.api("POST", runs(), { auth: strangerKey, body: { version: 2 } });
    expect(theirs.status).toBe(404);
    expect(
      (await creator.api("POST", runs("no-such-app"), { auth: ownerKey, body: { version: 2 } })).status,
    ).toBe(404);
    expect((await creator.api("POST", runs(), { auth: "pm_not_a_key", body: { version: 2 } })).status).toBe(
      401,
    );
    expect((await creator.api("POST", runs(), { auth: "", body: { version: 2 } })).status).toBe(401);

    const label = await creator.api("POST", runs(), { auth: ownerKey, body: { version: "nightly" } });
    expect(label.status).toBe(400);
    expect(label.body.fields.version).toMatch(
      /not a label of this app \(its labels: production, latest, staging\)/,
    );
    const noWait = await creator.api("POST", runs(), { auth: ownerKey, body: { version: 2, wait: false } });
    expect(noWait.status).toBe(400);
    expect(JSON.stringify(noWait.body)).toContain("wait");
    const extra = await creator.api("POST", runs(), { auth: ownerKey, body: { version: 2, notes: "x" } });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("notes");
    const missing = await creator.api("POST", runs(), { auth: ownerKey, body: { version: 9 } });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.fields)).toEqual(["version"]);
  });

  it("a key limited to other apps is refused for this one (403 naming it)", async () => {
    const other = await createLiveApp(creator, { price_cents: 25 }, { model: "gpt-4-turbo" });
    const limited = await creator.api("POST", "/api/keys/", {
      body: { name: "one app", allowed_apps: [other.slug] },
    });
    expect(limited.status).toBe(201);
    const refused = await creator.api("POST", runs(), { auth: limited.body.key, body: { version: 2 } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(app.slug);
  });
});

describe("promptmint eval (the CLI)", () => {
  it("prints the case table and totals and exits 0 when every case passed, 1 when any failed", async () => {
    const passed = await cli([
      "eval",
      app.slug,
      "--version",
      "v2",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
    ]);
    expect(passed.stderr).toBe("");
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/^CASE\s+RESULT\s+COST\s+LATENCY\s+DETAIL/);
    expect(passed.stdout).toMatch(/says first\s+pass\s+\$0\.\d+/);
    expect(passed.stdout).toContain(`${app.slug} v2: 1/1 passed, 0 failed`);
    expect(passed.stdout).toContain("PASSED");

    // The key from the environment, the version by label.
    const failed = await cli(["eval", app.slug, "--version", "latest", "--url", server.baseUrl], {
      PROMPTMINT_API_KEY: ownerKey,
    });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/says first\s+FAIL/);
    expect(failed.stdout).toContain('contains: does not contain "first: hello"');
    expect(failed.stdout).toContain(`${app.slug} v3 (latest): 0/1 passed, 1 failed`);

    const json = await cli([
      "eval",
      app.slug,
      "--version",
      "3",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
      "--json",
    ]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      version: 3,
      passed: false,
      run: { cases: 1, passed: 0 },
    });
  });

  it("exits 2 naming the problem: a bad key, another owner's app, usage errors, an unreachable server", async () => {
    const badKey = await cli([
      "eval",
      app.slug,
      "--version",
      "v2",
      "--url",
      server.baseUrl,
      "--key",
      "pm_wrong",
    ]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain("HTTP 401");
    expect(badKey.stderr).toContain("Check the API key");
    const theirs = await cli([
      "eval",
      app.slug,
      "--version",
      "v2",
      "--url",
      server.baseUrl,
      "--key",
      strangerKey,
    ]);
    expect(theirs.code).toBe(2);
    expect(theirs.stderr).toContain("HTTP 404");
    const badLabel = await cli([
      "eval",
      app.slug,
      "--version",
      "nightly",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
    ]);
    expect(badLabel.code).toBe(2);
    expect(badLabel.stderr).toContain("version: is not a label of this app");

    const noVersion = await cli(["eval", app.slug, "--url", server.baseUrl, "--key", ownerKey]);
    expect(noVersion).toMatchObject({ code: 2, stdout: "" });
    expect(noVersion.stderr).toContain("no version: pass --version");
    const noKey = await cli(["eval", app.slug, "--version", "v2", "--url", server.baseUrl]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("no API key");
    const unknownFlag = await cli(["eval", app.slug, "--version", "v2", "--fast"]);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("--fast");
    const noCommand = await cli([]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain("Usage: promptmint eval");
    const badCost = await cli([
      "eval",
      app.slug,
      "--version",
      "v2",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
      "--confirm-cost",
      "1.5",
    ]);
    expect(badCost.code).toBe(2);
    expect(badCost.stderr).toContain("--confirm-cost must be a whole number");
    const unreachable = await cli([
      "eval",
      app.slug,
      "--version",
      "v2",
      "--url",
      "http://127.0.0.1:9",
      "--key",
      ownerKey,
    ]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain("cannot reach http://127.0.0.1:9");
    expect((await cli(["--help"])).code).toBe(0);
  });

  it("a large run needs --confirm-cost: a 409 naming confirm_cost_micros (exit 2), then the run with it", async () => {
    // At gpt-4-turbo's 30 µ$ per output token, 4096 tokens hold about 123,000 µ$ per case: nine cases
    // estimate above the 1,000,000 µ$ that needs confirming.
    const { slug } = await createLiveApp(
      creator,
      { price_cents: 25 },
      { model: "gpt-4-turbo", max_tokens: 4096, prompt_template: "first: {{query}}" },
    );
    const promptId = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body.id;
    for (let i = 0; i < 9; i++)
      await creator.api("POST", `/api/prompts/${promptId}/evals/cases`, {
        body: {
          name: `case ${i}`,
          inputs: { query: `q${i}` },
          assertions: [{ kind: "contains", value: `first: q${i}` }],
        },
      });
    const estimate = (await creator.api("GET", `/api/prompts/${promptId}/evals/estimate?version=2`)).body;
    expect(estimate.needs_confirmation).toBe(true);

    const refused = await creator.api("POST", runs(slug), {
      auth: ownerKey,
      body: { version: "production" },
    });
    expect(refused.status).toBe(409);
    expect(Object.keys(refused.body.fields)).toEqual(["confirm_cost_micros"]);
    const unconfirmed = await cli([
      "eval",
      slug,
      "--version",
      "production",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
    ]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("HTTP 409");
    expect(unconfirmed.stderr).toContain(`confirm_cost_micros: must be at least ${estimate.estimate_micros}`);
    expect(unconfirmed.stderr).toContain("Pass --confirm-cost");

    const confirmed = await cli([
      "eval",
      slug,
      "--version",
      "production",
      "--url",
      server.baseUrl,
      "--key",
      ownerKey,
      "--confirm-cost",
      String(estimate.estimate_micros),
    ]);
    expect(confirmed.stderr).toBe("");
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain(`${slug} v2 (production): 9/9 passed, 0 failed`);
  });
});
