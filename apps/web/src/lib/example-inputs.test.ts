import type { IoSchema } from "@promptmint/contracts";
import { describe, expect, it } from "vitest";
import { exampleInputsOf } from "./example-inputs";

const schemaOf = (properties: IoSchema["properties"]): IoSchema => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

describe("example inputs", () => {
  it("gives every input a value of its type, never a <placeholder>", () => {
    const inputs = exampleInputsOf(
      schemaOf({
        topic: { type: "string" },
        lines: { type: "integer", minimum: 3, maximum: 7 },
        temperature: { type: "number", maximum: 0.5 },
        formal: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
        extra: { type: "object" },
      }),
    );
    expect(inputs).toEqual({
      topic: "example topic",
      lines: 3,
      temperature: 0.5,
      formal: true,
      tags: ["example tags"],
      extra: {},
    });
  });

  it("takes the default, then the first allowed value", () => {
    const inputs = exampleInputsOf(
      schemaOf({
        tone: { type: "string", enum: ["calm", "angry"] },
        language: { type: "string", default: "fr", enum: ["en", "fr"] },
      }),
    );
    expect(inputs).toEqual({ tone: "calm", language: "fr" });
  });

  it("meets a string's length bounds and pattern", () => {
    const inputs = exampleInputsOf(
      schemaOf({
        code: { type: "string", pattern: "^[a-z]{3}$" },
        email: { type: "string", pattern: "^[^@]+@[^@]+$" },
        essay: { type: "string", minLength: 40 },
        short_name: { type: "string", maxLength: 4 },
      }),
    );
    expect(inputs.code).toBe("abc");
    expect(inputs.email).toBe("test@example.com");
    expect((inputs.essay as string).length).toBe(40);
    expect((inputs.short_name as string).length).toBeLessThanOrEqual(4);
  });
});
