import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { eq, sql } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { appDailyStats, applications, appReviews, invocations, users } from "../db/schema/index.ts";
import { reconcile } from "../modules/billing/reconcile.ts";
import { refuseUncoveredPrice } from "../modules/prompts/cost-guard.ts";
import { createTestDatabase } from "../test/database.ts";

const run = promisify(execFile);
const testDb = await createTestDatabase();
afterAll(() => testDb.destroy());

it("seeds a demo creator with apps and days of calls whose rollups match the raw invocations", async () => {
  const root = path.resolve(import.meta.dirname, "../../../..");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    SECRET_KEY: "seed-test-secret-key-that-is-long-enough",
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "pm-seed-")),
    ...testDb.serverEnv,
  };
  const { stdout } = await run("node", ["apps/api/src/scripts/seed-demo.ts", "--days", "3"], {
    cwd: root,
    env,
    timeout: 120_000,
  });
  expect(stdout).toMatch(/Seeded 3 apps and \d+ invocations over 3 days/);
  expect(stdout).toContain("as demo@promptmint.dev");
  const again = await run("node", ["apps/api/src/scripts/seed-demo.ts", "--days", "3"], {
    cwd: root,
    env,
    timeout: 120_000,
  });
  expect(again.stdout).toContain("already has 3 apps");

  const database = await testDb.open();
  try {
    const db = database.db;
    const [creator] = await db.select().from(users).where(eq(users.email, "demo@promptmint.dev"));
    const apps = await db
      .select()
      .from(applications)
      .where(eq(applications.ownerId, creator?.id ?? ""));
    expect(apps.map((a) => a.name).sort()).toEqual(["Blog Post Writer", "Research Agent", "Support Chatbot"]);
    // The demo satisfies the product's own rules: each published prompt app passes the price guard,
    // so any edit a creator makes to it is judged as theirs would be (issue 32).
    const prompts = apps.filter((app) => app.type === "prompt");
    expect(prompts.map((app) => app.status)).toEqual(["live", "live"]);
    for (const app of prompts)
      await expect(refuseUncoveredPrice(db, { app, feePercent: 10 })).resolves.toBeUndefined();
    const [raw] = await db.select({ n: sql<number>`count(*)::int` }).from(invocations);
    const [rolled] = await db
      .select({ n: sql<number>`coalesce(sum(${appDailyStats.invocations}), 0)::int` })
      .from(appDailyStats);
    expect(raw?.n).toBeGreaterThan(10);
    expect(rolled?.n).toBe(raw?.n);
    // The demo customer paid for the blog writer's calls and reviewed it; the creator replied.
    const reviews = await db.select().from(appReviews);
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({ rating: 5, reply: "Thank you! More tones are on the way." });
    expect((await reconcile(db)).ok).toBe(true);
  } finally {
    await database.close();
  }
}, 180_000);
