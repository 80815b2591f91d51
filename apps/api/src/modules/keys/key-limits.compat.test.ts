import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyWorld, PRICE, startKeyWorld } from "./key-world.ts";

// Keys with options (decision 035) as the official openai SDK sees them: the OpenAI-style routes
// name the app in the body (`model`), so the allow-list is checked where the call is paid for.

let world: KeyWorld;

beforeAll(async () => {
  world = await startKeyWorld();
});
afterAll(async () => {
  await world?.stop();
});

const clientOf = (key: string) =>
  new OpenAI({ apiKey: key, baseURL: `${world.server.baseUrl}/api/v1`, maxRetries: 0 });

const failureOf = (call: Promise<unknown>) => call.then(() => undefined).catch((error: unknown) => error);

describe("openai", () => {
  it("chat.completions over the key's spend limit → refused 402 key_limit_reached", async () => {
    const { key } = await world.createKey({ spend_limit_cents: PRICE, limit_reset: "monthly" });
    const client = clientOf(key);
    const ask = () =>
      client.chat.completions.create({ model: world.appA, messages: [{ role: "user", content: "hi" }] });
    expect((await ask()).choices[0]?.message.content).toBe("echo: hi");
    const error = await failureOf(ask());
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 402, code: "key_limit_reached", type: "insufficient_quota" });
    expect((error as Error).message).toContain("spend limit of $0.30 per month (UTC) is reached");
  });

  it("chat.completions of an app the key does not allow → refused 403 app_not_allowed_for_key", async () => {
    const { key } = await world.createKey({ allowed_apps: [world.appA] });
    const client = clientOf(key);
    const error = await failureOf(
      client.chat.completions.create({ model: world.appB, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: "app_not_allowed_for_key" });
    expect((error as Error).message).toContain(`may not call the app '${world.appB}'`);
  });

  it("chat.completions of an app the key allows → works", async () => {
    const { key } = await world.createKey({ allowed_apps: [world.appA] });
    const completion = await clientOf(key).chat.completions.create({
      model: world.appA,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(completion.choices[0]?.message.content).toBe("echo: hi");
  });

  it("responses.create of an app the key does not allow → refused 403 app_not_allowed_for_key", async () => {
    const { key } = await world.createKey({ allowed_apps: [world.appA] });
    const error = await failureOf(clientOf(key).responses.create({ model: world.appB, input: "hi" }));
    expect(error).toMatchObject({ status: 403, code: "app_not_allowed_for_key" });
  });

  it("chat.completions with an expired key → refused 401 api_key_expired", async () => {
    const expiresAt = new Date(Date.now() + 1_000);
    const { key } = await world.createKey({ expires_at: expiresAt.toISOString() });
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50));
    const error = await failureOf(
      clientOf(key).chat.completions.create({
        model: world.appA,
        messages: [{ role: "user", content: "hi" }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "api_key_expired" });
    expect((error as Error).message).toContain(`expired on ${expiresAt.toISOString()}`);
  });
});
