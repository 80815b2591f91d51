import type { FastifyBaseLogger } from "fastify";
import { Registry } from "prom-client";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { startJobs } from "./jobs.ts";

function fakeLog() {
  const warnings: { obj: unknown; message: string }[] = [];
  const log = { warn: (obj: unknown, message: string) => warnings.push({ obj, message }) };
  return { log: log as unknown as FastifyBaseLogger, warnings };
}

/** A run that lasts until the test ends it. */
function gate() {
  let open: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { done, open };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

test("runs each job on its own interval, and at start only when asked", async () => {
  const { log } = fakeLog();
  const runs: string[] = [];
  const jobs = startJobs(
    [
      { name: "often", everyMs: 1_000, run: async () => runs.push("often") },
      { name: "rarely", everyMs: 3_000, atStart: true, run: async () => runs.push("rarely") },
    ],
    { log },
  );
  await vi.advanceTimersByTimeAsync(0);
  expect(runs).toEqual(["rarely"]);
  await vi.advanceTimersByTimeAsync(3_000);
  expect(runs.filter((name) => name === "often")).toHaveLength(3);
  expect(runs.filter((name) => name === "rarely")).toHaveLength(2);
  await jobs.stop();
});

test("a slow run makes the next tick skip instead of running beside it", async () => {
  const { log } = fakeLog();
  const registry = new Registry();
  let started = 0;
  const slow = gate();
  const jobs = startJobs(
    [
      {
        name: "slow",
        everyMs: 1_000,
        run: async () => {
          started += 1;
          if (started === 1) await slow.done;
        },
      },
    ],
    { log, registry },
  );
  await vi.advanceTimersByTimeAsync(3_500);
  expect(started).toBe(1);
  slow.open();
  await vi.advanceTimersByTimeAsync(1_000);
  expect(started).toBe(2);
  const metrics = await registry.getMetricsAsJSON();
  const skipped = metrics.find((metric) => metric.name === "job_skipped_ticks_total");
  expect(skipped?.values).toEqual([expect.objectContaining({ labels: { job: "slow" }, value: 2 })]);
  await jobs.stop();
});

test("a failure is logged with the job's name, counted, and the job runs again next tick", async () => {
  const { log, warnings } = fakeLog();
  const registry = new Registry();
  let calls = 0;
  const jobs = startJobs(
    [
      {
        name: "flaky",
        everyMs: 1_000,
        run: async () => {
          calls += 1;
          if (calls === 1) throw new Error("database away");
        },
      },
    ],
    { log, registry },
  );
  await vi.advanceTimersByTimeAsync(2_000);
  expect(calls).toBe(2);
  expect(warnings).toEqual([
    { obj: expect.objectContaining({ job: "flaky", err: expect.any(Error) }), message: "job flaky failed" },
  ]);
  const metrics = await registry.getMetricsAsJSON();
  const value = (name: string) => metrics.find((metric) => metric.name === name)?.values[0]?.value;
  expect(value("job_failures_total")).toBe(1);
  expect(value("job_runs_total")).toBe(1);
  expect(value("job_last_duration_seconds")).toBeGreaterThanOrEqual(0);
  await jobs.stop();
});

test("stop clears the timers and waits for the run in progress", async () => {
  const { log } = fakeLog();
  let started = 0;
  let finished = 0;
  const slow = gate();
  const jobs = startJobs(
    [
      {
        name: "sweep",
        everyMs: 1_000,
        run: async () => {
          started += 1;
          await slow.done;
          finished += 1;
        },
      },
    ],
    { log },
  );
  await vi.advanceTimersByTimeAsync(1_000);
  expect(started).toBe(1);
  let stopped = false;
  const stopping = jobs.stop().then(() => {
    stopped = true;
  });
  await vi.advanceTimersByTimeAsync(5_000);
  expect(stopped).toBe(false);
  slow.open();
  await stopping;
  expect(finished).toBe(1);
  await vi.advanceTimersByTimeAsync(5_000);
  expect(started).toBe(1);
});

test("runNow runs a job at once, and refuses a name it does not know", async () => {
  const { log } = fakeLog();
  let calls = 0;
  const run = async () => {
    calls += 1;
  };
  const jobs = startJobs([{ name: "sweep", everyMs: 60_000, run }], { log });
  await jobs.runNow("sweep");
  expect(calls).toBe(1);
  expect(() => jobs.runNow("nothing")).toThrow("no background job named nothing");
  await jobs.stop();
});
