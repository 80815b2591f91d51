import type { FastifyBaseLogger } from "fastify";
import { Counter, Gauge, type Registry } from "prom-client";

/** One background job: a named function run every `everyMs` while the server runs. */
export interface Job {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
  /** Run once at start too, instead of waiting a whole interval (a server down for days catches up). */
  atStart?: boolean;
}

export interface Jobs {
  /** Runs the job now unless a run of it is in progress (then waits for that one). */
  runNow(name: string): Promise<void>;
  /** No more runs; resolves once the runs in progress are over. */
  stop(): Promise<void>;
}

/**
 * Starts each job on its own timer. A job never runs twice at once: a tick that finds the last run
 * still going is skipped (a slow sweep is not piled onto itself, and the database is not asked the
 * same thing twice at once). A failure is logged with the job's name and the next tick tries again.
 * The timers do not hold the process open; `stop` is what the server's close waits on.
 */
export function startJobs(jobs: Job[], options: { log: FastifyBaseLogger; registry?: Registry }): Jobs {
  const { log } = options;
  const metrics = options.registry && jobMetrics(options.registry);
  const running = new Map<string, Promise<void>>();
  let stopped = false;

  const runOnce = (job: Job): Promise<void> => {
    const inProgress = running.get(job.name);
    if (inProgress) {
      metrics?.skipped.inc({ job: job.name });
      return inProgress;
    }
    const startedAt = performance.now();
    const run = Promise.resolve()
      .then(job.run)
      .then(
        () => metrics?.runs.inc({ job: job.name }),
        (err: unknown) => {
          metrics?.failures.inc({ job: job.name });
          log.warn({ err, job: job.name }, `job ${job.name} failed`);
        },
      )
      .then(() => {
        metrics?.lastDuration.set({ job: job.name }, (performance.now() - startedAt) / 1000);
        running.delete(job.name);
      });
    running.set(job.name, run);
    return run;
  };

  const byName = new Map(jobs.map((job) => [job.name, job]));
  if (byName.size !== jobs.length) throw new Error("two background jobs have the same name");
  const timers = jobs.map((job) => {
    if (job.atStart) void runOnce(job);
    const timer = setInterval(() => {
      if (!stopped) void runOnce(job);
    }, job.everyMs);
    timer.unref();
    return timer;
  });

  return {
    runNow(name) {
      const job = byName.get(name);
      if (!job) throw new Error(`no background job named ${name}`);
      return runOnce(job);
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      await Promise.all(running.values());
    },
  };
}

function jobMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ["job"] as const;
  return {
    runs: new Counter({
      name: "job_runs_total",
      help: "Background job runs that ended well",
      labelNames,
      registers,
    }),
    failures: new Counter({
      name: "job_failures_total",
      help: "Background job runs that failed",
      labelNames,
      registers,
    }),
    skipped: new Counter({
      name: "job_skipped_ticks_total",
      help: "Background job ticks skipped because the last run was still going",
      labelNames,
      registers,
    }),
    lastDuration: new Gauge({
      name: "job_last_duration_seconds",
      help: "How long the last run of each background job took",
      labelNames,
      registers,
    }),
  };
}
