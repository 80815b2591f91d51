import { and, eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// Versions with labels (docs/decisions/057): editing a live app changes nothing for its callers
// until the creator promotes; callers may pin a version or a label; every answer names its version.
const { server, vendor } = useVendorServer({ OPENAI_API_KEY: "sk-vendor-test" });
const creator = useCaller(server, "Release Creator");
const consumer = useCaller(server, "Release Consumer");
const stranger = useCaller(server, "Release Stranger");

beforeAll(async () => {
  await fundWallet(consumer, 100_000);
  // The owner's own calls hold their model cost from the owner's wallet (decision 062).
  await fundWallet(creator, 1_000);
});
beforeEach(() => vendor.set({ kind: "echo" }));

async function liveApp() {
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 25 },
    { model: "gpt-4-turbo", prompt_template: "first: {{query}}", changelog: "v2" },
  );
  const config = await creator.api("GET", `/api/app/${slug}/prompt/`);
  return { slug, promptId: config.body.id as string };
}

function call(slug: string, pin?: string) {
  return consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: {}, query: "hello", response_mode: "blocking", user: "u1" },
    headers: pin ? { "promptmint-version": pin } : {},
  });
}

describe("releases", () => {
  it("keeps callers on production while a live app is edited, until the creator promotes; a rollback is one move", async () => {
    const { slug, promptId } = await liveApp();
    const before = await call(slug);
    expect(before.status).toBe(200);
    expect(before.body.answer).toContain("first: hello");
    expect(before.headers.get("promptmint-version")).toBe("v2");

    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "second: {{query}}", temperature: 0.1, changelog: "Sharper" },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      current_version: 3,
      production_version: 2,
      temperature: 0.1,
      latest_version: { version: 3, labels: ["latest"] },
      active_version: { version: 2, temperature: 0.7, is_active: true },
    });
    const stillOld = await call(slug);
    expect(stillOld.body.answer).toContain("first: hello");
    expect(stillOld.headers.get("promptmint-version")).toBe("v2");

    // A caller may try the new one before it is released: by number, or by the `latest` label.
    const pinned = await call(slug, "v3");
    expect(pinned.body.answer).toContain("second: hello");
    expect(pinned.headers.get("promptmint-version")).toBe("v3");
    expect((await call(slug, "latest")).body.answer).toContain("second: hello");

    const promoted = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 3, reason: "Sharper answers" },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 3 }));
    const released = await call(slug);
    expect(released.body.answer).toContain("second: hello");
    expect(released.headers.get("promptmint-version")).toBe("v3");

    const rolledBack = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 2, reason: "Rollback" },
    });
    expect(rolledBack.status).toBe(200);
    expect((await call(slug)).body.answer).toContain("first: hello");
    // Every move is audited, newest first, with who and why.
    expect(
      rolledBack.body.moves
        .filter((m: { name: string }) => m.name === "production")
        .slice(0, 2)
        .map((m: { from_version: number; to_version: number; reason: string; actor_name: string }) => [
          m.from_version,
          m.to_version,
          m.reason,
          typeof m.actor_name,
        ]),
    ).toEqual([
      [3, 2, "Rollback", "string"],
      [2, 3, "Sharper answers", "string"],
    ]);

    // Each invocation records the version that answered it.
    const rows = await server.database.db
      .select({ version: invocations.appVersion })
      .from(invocations)
      .where(and(eq(invocations.status, "success"), eq(invocations.endUser, "u1")));
    const versions = rows.map((row) => row.version);
    expect(versions.filter((v) => v === 3).length).toBeGreaterThanOrEqual(3);
    expect(versions.filter((v) => v === 2).length).toBeGreaterThanOrEqual(3);
    expect(versions).not.toContain(null);
  });

  it("answers a clear 4xx for a pin that does not exist or is malformed, and charges nothing", async () => {
    const { slug } = await liveApp();
    const balance = (await consumer.api("GET", "/api/wallet/")).body;
    const missing = await call(slug, "v99");
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/no version v99/);
    const noLabel = await call(slug, "canary");
    expect(noLabel.status).toBe(404);
    expect(noLabel.body.message).toMatch(/no label canary/);
    const malformed = await call(slug, "v1.2!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/Promptmint-Version header/);
    expect((await consumer.api("GET", "/api/wallet/")).body).toEqual(balance);
  });

  it("lets the creator set their own labels, which callers pin; latest and production cannot be removed", async () => {
    const { slug, promptId } = await liveApp();
    await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "staged: {{query}}" },
    });
    const staged = await creator.api("PUT", `/api/prompts/${promptId}/labels/staging`, {
      body: { version: 3 },
    });
    expect(staged.status).toBe(200);
    expect((await call(slug, "staging")).body.answer).toContain("staged: hello");

    expect(
      (await creator.api("PUT", `/api/prompts/${promptId}/labels/latest`, { body: { version: 2 } })).status,
    ).toBe(400);
    expect((await creator.api("DELETE", `/api/prompts/${promptId}/labels/production`)).status).toBe(400);
    expect(
      (await creator.api("PUT", `/api/prompts/${promptId}/labels/Bad Name`, { body: { version: 2 } })).status,
    ).toBe(400);
    expect(
      (await creator.api("PUT", `/api/prompts/${promptId}/labels/staging`, { body: { version: 42 } })).status,
    ).toBe(404);
    // Another person's prompt is not found, and its labels do not move.
    expect(
      (await stranger.api("PUT", `/api/prompts/${promptId}/labels/production`, { body: { version: 3 } }))
        .status,
    ).toBe(404);

    const removed = await creator.api("DELETE", `/api/prompts/${promptId}/labels/staging`);
    expect(removed.status).toBe(200);
    expect(removed.body.labels.map((l: { name: string }) => l.name)).toEqual(["production", "latest"]);
    expect((await call(slug, "staging")).status).toBe(404);
  });

  it("refuses a pinned version the app's price no longer covers, before payment; production still answers", async () => {
    const { slug, promptId } = await liveApp();
    // v3: a one-token answer, released; then the price is cut to what v3 needs, not v2.
    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { max_tokens: 1, prompt_template: "short: {{query}}", promote: true },
    });
    expect(saved.body.production_version).toBe(3);
    const cut = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 1 } });
    expect(cut.status).toBe(200);
    const balance = (await consumer.api("GET", "/api/wallet/")).body;
    const old = await call(slug, "v2");
    expect(old.status).toBe(409);
    expect(old.body.message).toMatch(/v2 of this app cannot be called at its current price/);
    expect((await consumer.api("GET", "/api/wallet/")).body).toEqual(balance);
    const current = await call(slug);
    expect(current.status).toBe(200);
    expect(current.headers.get("promptmint-version")).toBe("v3");
    // The creator may still try any version of their own app: no price, the model cost from their wallet.
    const own = await creator.api("POST", `/api/app/${slug}/completion-messages`, {
      body: { inputs: {}, query: "hello", response_mode: "blocking" },
      headers: { "promptmint-version": "v2" },
    });
    expect(own.status).toBe(200);
    expect(own.body.answer).toContain("first: hello");
    void promptId;
  });

  it("judges a promotion by the price guard on the promoted version's own model", async () => {
    const { slug, promptId } = await liveApp();
    // A much dearer model with a long answer: 25 cents no longer covers its worst case.
    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 8192, prompt_template: "long: {{query}}" },
    });
    if (saved.status === 200) {
      const promote = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
        body: { version: saved.body.current_version },
      });
      expect(promote.status).toBe(400);
      expect(promote.body.message).toMatch(/cents/);
      expect((await call(slug)).body.answer).toContain("first: hello");
    } else {
      // The guard refuses the save itself: then nothing can be promoted either.
      expect(saved.status).toBe(400);
    }
  });
});
