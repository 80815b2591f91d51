import { describe, expect, it } from "vitest";
import { fieldNameProblemOf, fieldsOf, newSchemaField, schemaOf } from "./schema-fields";

describe("schema fields", () => {
  it("builds the IoSchema shape, leaving out unnamed fields and constraints of other types", () => {
    const fields = [
      newSchemaField({
        name: "topic",
        required: true,
        description: " What to write about ",
        minLength: "3",
        maxLength: "80",
        pattern: "^[a-z ]+$",
        minimum: "5",
        defaultValue: "tea",
        allowedValues: " tea \n\n coffee\n  ",
      }),
      newSchemaField({
        name: "words",
        type: "integer",
        minimum: "100",
        maximum: "2000",
        defaultValue: "500",
      }),
      newSchemaField({ name: "formal", type: "boolean", defaultValue: "false", allowedValues: "x" }),
      newSchemaField({ name: "tags", type: "array", itemsType: "string", defaultValue: '["a"]' }),
      newSchemaField({ name: "meta", type: "object", defaultValue: "not json" }),
      newSchemaField({ name: "   " }),
    ];

    expect(schemaOf(fields)).toEqual({
      type: "object",
      properties: {
        topic: {
          type: "string",
          description: "What to write about",
          minLength: 3,
          maxLength: 80,
          pattern: "^[a-z ]+$",
          default: "tea",
          enum: ["tea", "coffee"],
        },
        words: { type: "integer", minimum: 100, maximum: 2000, default: 500 },
        formal: { type: "boolean", default: false },
        tags: { type: "array", items: { type: "string" }, default: ["a"] },
        meta: { type: "object" },
      },
      required: ["topic"],
      additionalProperties: false,
    });
  });

  it("reads numeric allowed values as numbers and drops the rest", () => {
    const schema = schemaOf([newSchemaField({ name: "n", type: "number", allowedValues: "1\n2.5\nthree" })]);
    expect(schema.properties.n?.enum).toEqual([1, 2.5]);
  });

  it("reads boolean, array-item and object allowed values as their type and drops the rest", () => {
    const schema = schemaOf([
      newSchemaField({ name: "b", type: "boolean", allowedValues: "true\nyes\nfalse" }),
      newSchemaField({ name: "a", type: "array", itemsType: "integer", allowedValues: "1\n2.5\n3" }),
      newSchemaField({ name: "o", type: "object", allowedValues: '{"k": 1}\n[1]\nnot json' }),
    ]);
    expect(schema.properties.b?.enum).toEqual([true, false]);
    expect(schema.properties.a).toEqual({ type: "array", items: { type: "integer", enum: [1, 3] } });
    expect(schema.properties.o?.enum).toEqual([{ k: 1 }]);
    expect(schemaOf(fieldsOf(schema))).toEqual(schema);
  });

  it("gives back the same schema after a round trip through the builder rows", () => {
    const schema = schemaOf([
      newSchemaField({
        name: "topic",
        required: true,
        description: "d",
        allowedValues: "a\nb",
        maxLength: "9",
      }),
      newSchemaField({ name: "formal", type: "boolean", defaultValue: "true" }),
      newSchemaField({ name: "tags", type: "array", itemsType: "number" }),
    ]);
    expect(schemaOf(fieldsOf(schema))).toEqual(schema);
    expect(fieldsOf(null)).toEqual([]);
  });

  it("flags names the API would refuse", () => {
    const a = newSchemaField({ name: "1st" });
    const b = newSchemaField({ name: "topic" });
    const c = newSchemaField({ name: "topic" });
    expect(fieldNameProblemOf(a, [a, b, c])).toMatch(/letters, digits and underscores/);
    expect(fieldNameProblemOf(b, [a, b, c])).toBe("Another field already has this name");
    expect(fieldNameProblemOf(newSchemaField({ name: "_ok_1" }), [])).toBeUndefined();
  });
});
