import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCaller } from "../test/caller.ts";
import { freePort } from "../test/server.ts";
import { recordSecurityFigure } from "./report.ts";
import { startCountingUpstream } from "./upstream.ts";

let scenariosPassed = 0;
afterAll(() => recordSecurityFigure("failure_mode_checks", scenariosPassed));

describe("SIGTERM", () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("finishes calls in flight, refuses new connections, and exits within SHUTDOWN_TIMEOUT_SECONDS", async () => {
    const upstream = await startCountingUpstream();
    try {
      dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-sigterm-"));
      const port = await freePort();
      const baseUrl = `http://127.0.0.1:${port}`;
      child = spawn(process.execPath, [path.resolve(import.meta.dirname, "../main.ts")], {
        env: {
          ...process.env,
          PORT: String(port),
          HOST: "127.0.0.1",
          PUBLIC_URL: baseUrl,
          DATA_DIR: dataDir,
          DATABASE_URL: "",
          SECRET_KEY: "test-secret-key-that-is-long-enough-0123456789",
          NODE_ENV: "test",
          LOG_LEVEL: "silent",
          ALLOW_PRIVATE_UPSTREAMS: "true",
          SHUTDOWN_TIMEOUT_SECONDS: "4",
          REDIS_URL: "",
        },
        stdio: "ignore",
      });
      const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
      const ready = Date.now() + 90_000;
      while (Date.now() < ready) {
        const ok = await fetch(`${baseUrl}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const creator = await createCaller(baseUrl, "Shutdown Creator");
      const appFor = async (hook: string) => {
        const created = await creator.api("POST", "/api/app/", {
          body: {
            name: `Shutdown ${hook}`,
            type: "workflow",
            visibility: "public",
            provider_config: { app_id: "a", api_key: "k-0000" },
          },
        });
        await creator.api("PATCH", `/api/app/${created.body.slug}/workflow/`, {
          body: { provider: "webhook", provider_config: { url: `${upstream.url}/${hook}` } },
        });
        await creator.api("PATCH", `/api/app/${created.body.slug}/update_status/`, {
          body: { status: "live" },
        });
        return created.body.slug as string;
      };
      const slow = await appFor("slow");
      const stuck = await appFor("hang");
      const run = (slug: string) =>
        creator.api("POST", `/api/app/${slug}/completion-messages`, {
          body: { inputs: {}, query: "hi", response_mode: "blocking" },
        });

      const bothArrived = Promise.all([upstream.nextCall(), upstream.nextCall()]);
      const slowCall = run(slow);
      const stuckCall = run(stuck).catch((error: Error) => error);
      await bothArrived;
      const signalled = Date.now();
      child.kill("SIGTERM");

      // New connections are refused soon after the signal.
      let refused = false;
      while (!refused && Date.now() - signalled < 2000) {
        refused = await new Promise<boolean>((resolve) => {
          const socket = net.connect(port, "127.0.0.1");
          socket.once("connect", () => {
            socket.destroy();
            resolve(false);
          });
          socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
        });
        if (!refused) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(refused).toBe(true);

      // The call in flight completes normally.
      const finished = await slowCall;
      expect(finished.status).toBe(200);
      expect(finished.body.answer).toBe("fine");

      // The stuck call cannot keep the process alive past the deadline.
      const code = await exited;
      const tookMs = Date.now() - signalled;
      expect(code).toBe(1);
      expect(tookMs).toBeGreaterThanOrEqual(3500);
      // Far past the 4 s deadline but far below a process that waits on the stuck call: no load
      // on the machine reaches it (decision 066).
      expect(tookMs).toBeLessThan(30_000);
      expect(await stuckCall).toBeInstanceOf(Error);
      scenariosPassed += 1;
    } finally {
      await upstream.stop();
    }
  }, 120_000);
});
