import { expect } from "vitest";
import { armOf, bucketOf, stickyKeyFor } from "../modules/releases/serving.ts";
import type { ApiAnswer, Caller } from "./caller.ts";

/**
 * What an app's callers get is what `GET {base}/serving` says (docs/decisions/075), for a prompt
 * app and a workflow app alike: with a 50/50 experiment of v2 and v3 running (production v2),
 * every sticky caller gets the arm the serving state and the bucket function name; moving
 * production without `end_experiment` is refused and changes nothing; with it, the experiment ends
 * ("stopped") and every next caller gets the new production.
 */
export async function expectServingTruth(options: {
  creator: Caller;
  /** `/api/prompts/{id}` or `/api/workflows/{id}`. */
  base: string;
  /** One call as this end user: its answer names the version in `promptmint-version`. */
  call: (user: string) => Promise<ApiAnswer>;
  prefix: string;
}): Promise<void> {
  const { creator, base, call, prefix } = options;
  const users = Array.from({ length: 16 }, (_, i) => `${prefix}-${i}`);
  const quiet = await creator.api("GET", `${base}/serving`);
  expect(quiet.status).toBe(200);
  expect(quiet.body).toEqual({ production_version: 2, experiment: null });
  for (const user of users.slice(0, 2))
    expect((await call(user)).headers.get("promptmint-version")).toBe("v2");

  const arms = [
    { version: 2, percent: 50 },
    { version: 3, percent: 50 },
  ];
  const started = await creator.api("POST", `${base}/experiments/`, { body: { arms } });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const serving = await creator.api("GET", `${base}/serving`);
  expect(serving.status).toBe(200);
  expect(serving.body).toMatchObject({
    production_version: 2,
    experiment: { id: started.body.id, status: "running", arms, sticky_by: null },
  });
  const running = serving.body.experiment as { id: string; arms: typeof arms; sticky_by: null };
  const expected = (user: string) =>
    armOf(
      running.arms,
      bucketOf(running.id, stickyKeyFor({ endUser: user, account: "-" }, running.sticky_by)),
    ).version;
  // Both arms are among 16 callers (all on one arm: 2 in 65,536).
  expect(new Set(users.map(expected)).size).toBe(2);
  for (const user of users) {
    const answer = await call(user);
    expect(answer.headers.get("promptmint-version"), `${user}: ${answer.status}`).toBe(`v${expected(user)}`);
  }

  // Moving production now would leave these callers on the arms: refused, naming the split.
  const before = await creator.api("GET", `${base}/labels/`);
  const refused = await creator.api("PUT", `${base}/labels/production`, { body: { version: 3 } });
  expect(refused.status).toBe(409);
  expect(refused.body.code).toBe("experiment_running");
  expect(refused.body.message).toContain("v2 50% / v3 50%");
  expect(refused.body.fields.end_experiment).toMatch(/must be true/);
  expect((await creator.api("GET", `${base}/labels/`)).body).toEqual(before.body);
  expect((await creator.api("GET", `${base}/serving`)).body).toEqual(serving.body);
  for (const user of users.slice(0, 4))
    expect((await call(user)).headers.get("promptmint-version")).toBe(`v${expected(user)}`);

  // With end_experiment: one step ends it and moves production; every next caller gets v3.
  const moved = await creator.api("PUT", `${base}/labels/production`, {
    body: { version: 3, end_experiment: true, reason: "ship v3" },
  });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  expect(moved.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 3 }));
  expect(moved.body.moves[0]).toMatchObject({
    name: "production",
    from_version: 2,
    to_version: 3,
    reason: "ship v3",
  });
  expect((await creator.api("GET", `${base}/serving`)).body).toEqual({
    production_version: 3,
    experiment: null,
  });
  const list = await creator.api("GET", `${base}/experiments/`);
  expect(list.body.running).toBeNull();
  expect(list.body.experiments[0]).toMatchObject({ id: running.id, status: "ended", outcome: "stopped" });
  expect(list.body.experiments[0].end_reason).toMatch(/production to v3: ship v3/);
  for (const user of users) expect((await call(user)).headers.get("promptmint-version")).toBe("v3");
}
