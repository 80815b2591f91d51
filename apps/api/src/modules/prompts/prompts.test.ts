import { describe, expect, it } from "vitest";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { detectVariables, renderTemplate } from "./template.ts";

const server = useTestServer();
const owner = useCaller(server, "Prompt Owner");
const stranger = useCaller(server, "Stranger");

describe("templates", () => {
  it("detects variables in order, once each, and renders them", () => {
    expect(detectVariables("Hi {{ name }}, about {{topic}} and {{name}}")).toEqual(["name", "topic"]);
    expect(renderTemplate("{{a}}+{{ b }}", { a: 1, b: "two" })).toBe("1+two");
  });
  it("names a missing variable and a malformed placeholder", () => {
    expect(() => renderTemplate("{{a}} {{b}}", { a: 1 })).toThrow("Missing value for variable: b");
    expect(() => detectVariables("{{ two words }}")).toThrow("Malformed placeholder '{{ two words }}'");
    expect(() => detectVariables("Hello {{name")).toThrow(/Unclosed or unopened placeholder/);
  });
});

const schema = {
  type: "object",
  properties: {
    topic: { type: "string", minLength: 2 },
    words: { type: "integer", minimum: 10, default: 50 },
  },
  required: ["topic"],
  additionalProperties: false,
};

describe("prompt config", () => {
  it("starts with one version, and every change (model settings too) is a new version; the same save is none", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Versioned" } });
    const initial = await owner.api("GET", `/api/app/${app.slug}/prompt/`);
    expect(initial.body).toMatchObject({
      // SPEC §9's prompt editor defaults, a model among the editor's options.
      model: "gpt4",
      temperature: 0.7,
      max_tokens: 1000,
      top_p: 1,
      frequency_penalty: 0,
      presence_penalty: 0,
      current_version: 1,
      production_version: 1,
      active_version: { version: 1, prompt_template: "{{query}}", is_active: true, model: "gpt4" },
      latest_version: { version: 1, labels: ["production", "latest"] },
    });

    // Model settings belong to a version (docs/decisions/057): promoting one changes them too.
    const settingsOnly = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { temperature: 0.2, model: "claude-3-haiku" },
    });
    expect(settingsOnly.body).toMatchObject({
      temperature: 0.2,
      model: "claude-3-haiku",
      current_version: 2,
      latest_version: { version: 2, model: "claude-3-haiku", temperature: 0.2, prompt_template: "{{query}}" },
    });

    const v3 = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: {
        prompt_template: "Write {{words}} words on {{topic}}",
        input_schema: schema,
        changelog: "Updated via UI",
      },
    });
    expect(v3.body.current_version).toBe(3);
    // A draft app: nobody calls it yet, so each save is what it will answer with.
    expect(v3.body.active_version).toMatchObject({
      version: 3,
      changelog: "Updated via UI",
      input_schema: schema,
      model: "claude-3-haiku",
      author_name: expect.any(String),
    });

    const same = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { prompt_template: "Write {{words}} words on {{topic}}", temperature: 0.2 },
    });
    expect(same.body.current_version).toBe(3);

    const versions = await owner.api("GET", `/api/prompts/${v3.body.id}/versions/`);
    expect(
      versions.body.map((v: { version: number; is_active: boolean }) => [v.version, v.is_active]),
    ).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);

    const restored = await owner.api("POST", `/api/prompts/${v3.body.id}/versions/`, {
      body: { version_id: versions.body[2].id },
    });
    expect(restored.body).toMatchObject({
      current_version: 4,
      active_version: { prompt_template: "{{query}}", changelog: "Restored version 1", model: "gpt4" },
    });
    // Versions are immutable: version 3 is still there, unchanged.
    const after = await owner.api("GET", `/api/prompts/${v3.body.id}/versions/`);
    expect(after.body.map((v: { version: number }) => v.version)).toEqual([4, 3, 2, 1]);
    expect(after.body[1].prompt_template).toBe("Write {{words}} words on {{topic}}");
  });

  it("keeps the schema's fields in the creator's order, and a re-sent schema is no new version", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Field Order" } });
    // Neither alphabetical nor by length: the order a form shows its fields in.
    const ordered = {
      type: "object",
      properties: { zebra: { type: "string" }, apple: { type: "string" }, mid: { type: "integer" } },
      required: ["zebra"],
      additionalProperties: false,
    };
    const v2 = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { prompt_template: "{{zebra}} {{apple}} {{mid}}", input_schema: ordered },
    });
    expect(v2.body.current_version).toBe(2);

    const read = await owner.api("GET", `/api/app/${app.slug}/prompt/`);
    expect(Object.keys(read.body.active_version.input_schema)).toEqual(Object.keys(ordered));
    expect(Object.keys(read.body.active_version.input_schema.properties)).toEqual(["zebra", "apple", "mid"]);

    const again = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { prompt_template: "{{zebra}} {{apple}} {{mid}}", input_schema: ordered },
    });
    expect(again.body.current_version).toBe(2);
  });

  it("refuses unknown models, out-of-range settings, malformed templates and bad schema patterns", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Strict" } });
    const cases: [object, string][] = [
      [{ model: "gpt-99" }, "model"],
      [{ temperature: 3 }, "temperature"],
      [{ max_tokens: 0 }, "max_tokens"],
      [{ top_p: 1.5 }, "top_p"],
      [{ prompt_template: "Hi {{ not valid }}" }, "prompt_template"],
      [
        {
          input_schema: { type: "object", properties: { a: { type: "string", pattern: "(" } }, required: [] },
        },
        "input_schema.properties.a.pattern",
      ],
      [
        { input_schema: { type: "object", properties: { "bad name": { type: "string" } }, required: [] } },
        "input_schema.properties.bad name",
      ],
    ];
    for (const [body, field] of cases) {
      const response = await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(response.body.fields).join(","), JSON.stringify(body)).toContain(field);
    }
    expect((await owner.api("GET", `/api/app/${app.slug}/prompt/`)).body.current_version).toBe(1);
  });

  it("answers 'Prompt not found' for a workflow app and 404 for someone else's prompt versions", async () => {
    const { body: flow } = await owner.api("POST", "/api/app/", {
      body: { name: "Flow", type: "workflow", provider_config: { app_id: "x", api_key: "y" } },
    });
    const response = await owner.api("GET", `/api/app/${flow.slug}/prompt/`);
    expect(response.status).toBe(404);
    expect(response.body.message).toBe("Prompt not found");
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Mine" } });
    const { body: config } = await owner.api("GET", `/api/app/${app.slug}/prompt/`);
    expect((await stranger.api("GET", `/api/prompts/${config.id}/versions/`)).status).toBe(404);
    expect(
      (
        await stranger.api("POST", `/api/prompts/${config.id}/versions/`, {
          body: { version_id: config.active_version.id },
        })
      ).status,
    ).toBe(404);
  });
});

describe("test-config", () => {
  it("renders with test inputs and reports detected variables", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Tester" } });
    const response = await owner.api("POST", `/api/app/${app.slug}/prompt/test-config/`, {
      body: {
        prompt_template: "Write {{words}} words on {{topic}}",
        input_schema: schema,
        test_inputs: { topic: "bees" },
      },
    });
    expect(response.body).toEqual({
      success: true,
      message: "Template is valid: 2 variables filled",
      error: null,
      rendered_template: "Write 50 words on bees",
      detected_variables: ["words", "topic"],
      // No model key on this server: the sandbox answers the run (prompt-test-run.test.ts).
      run: expect.objectContaining({
        sandbox: true,
        answer: expect.stringContaining("Write 50 words on bees"),
      }),
    });
  });

  it("reports a missing variable, a malformed placeholder and inputs that break the schema", async () => {
    const test = (body: object) => owner.api("POST", "/api/prompts/test-config/", { body });
    const missing = await test({
      prompt_template: "About {{topic}} for {{audience}}",
      test_inputs: { topic: "x" },
    });
    expect(missing.body).toMatchObject({
      success: false,
      error: "Missing value for variable: audience",
      detected_variables: ["topic", "audience"],
    });
    const malformed = await test({ prompt_template: "About {{topic", test_inputs: {} });
    expect(malformed.body.success).toBe(false);
    expect(malformed.body.error).toMatch(/Unclosed/);
    const broken = await test({
      prompt_template: "{{topic}}",
      input_schema: schema,
      test_inputs: { topic: "x" },
    });
    expect(broken.body).toMatchObject({
      success: false,
      error: "test_inputs.topic must be at least 2 characters",
    });
  });

  it("holds boolean, array-item, object and patterned string inputs to their allowed values, compared by value", async () => {
    const test = (test_inputs: object) =>
      owner.api("POST", "/api/prompts/test-config/", {
        body: {
          prompt_template: "{{code}}",
          input_schema: {
            type: "object",
            properties: {
              code: { type: "string", pattern: "^[a-z]+$", enum: ["tea", "cake"] },
              strict: { type: "boolean", enum: [true] },
              tags: { type: "array", items: { type: "string", enum: ["green", "black"] } },
              size: { type: "object", enum: [{ cup: "S" }, { cup: "L", hot: true }] },
            },
            required: ["code"],
            additionalProperties: false,
          },
          test_inputs,
        },
      });
    const allowed = await test({ code: "tea", strict: true, tags: ["black"], size: { hot: true, cup: "L" } });
    expect(allowed.body).toMatchObject({ success: true, rendered_template: "tea" });

    const cases: [object, string][] = [
      [{ code: "milk" }, "test_inputs.code must be one of: tea, cake"],
      [{ code: "tea", strict: false }, "test_inputs.strict must be one of: true"],
      [
        { code: "tea", tags: ["green", "oolong"] },
        "test_inputs.tags must contain only items among: green, black",
      ],
      [
        { code: "tea", size: { cup: "M" } },
        'test_inputs.size must be one of: {"cup":"S"}, {"cup":"L","hot":true}',
      ],
    ];
    for (const [inputs, error] of cases) {
      expect((await test(inputs)).body, error).toMatchObject({ success: false, error });
    }
  });
});

describe("save & publish (PATCH /app/{slug}/prompt-application/)", () => {
  const save = (slug: string, body: object) =>
    owner.api("PATCH", `/api/app/${slug}/prompt-application/`, { body });

  it("leaves the app as it was, still a draft, when the prompt is refused", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", {
      body: { name: "All Or Nothing", price_cents: 10 },
    });

    const refused = await save(app.slug, {
      application: { status: "live", description: "Now live", price_cents: 12 },
      prompt: { prompt_template: "About {{topic", changelog: "Updated via UI" },
    });

    expect(refused.status).toBe(400);
    expect(refused.body.fields.prompt_template).toMatch(/Unclosed/);
    const after = await owner.api("GET", `/api/app/${app.slug}/`);
    expect(after.body).toMatchObject({ status: "draft", description: "", price_cents: 10 });
    const prompt = await owner.api("GET", `/api/app/${app.slug}/prompt/`);
    expect(prompt.body.active_version).toMatchObject({ version: 1, prompt_template: "{{query}}" });
  });

  it("publishes with the new prompt, the price guard judging the prompt being written against the price being set", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", {
      body: { name: "Publish Both", price_cents: 10 },
    });

    // 1 cent covers 64 tokens of gpt4 but not the 1000 of the stored prompt: judged together, it passes.
    const saved = await save(app.slug, {
      application: { status: "live", price_cents: 1 },
      prompt: { prompt_template: "Answer: {{query}}", max_tokens: 64, changelog: "Updated via UI" },
    });

    expect(saved.status).toBe(200);
    expect(saved.body.application).toMatchObject({ slug: app.slug, status: "live", price_cents: 1 });
    expect(saved.body.prompt).toMatchObject({
      max_tokens: 64,
      active_version: { version: 2, prompt_template: "Answer: {{query}}" },
    });
    const tooCheap = await save(app.slug, {
      application: { price_cents: 1 },
      prompt: { max_tokens: 1000, changelog: "Updated via UI" },
    });
    expect(tooCheap.status).toBe(400);
    expect(tooCheap.body.fields.price_cents).toMatch(/^At least 7 cents/);
    expect((await owner.api("GET", `/api/app/${app.slug}/prompt/`)).body.max_tokens).toBe(64);
  });

  it("is the owner's alone", async () => {
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Not Yours" } });
    const response = await stranger.api("PATCH", `/api/app/${app.slug}/prompt-application/`, {
      body: { application: { status: "live" }, prompt: {} },
    });
    expect(response.status).toBe(404);
    expect((await owner.api("GET", `/api/app/${app.slug}/`)).body.status).toBe("draft");
  });
});
