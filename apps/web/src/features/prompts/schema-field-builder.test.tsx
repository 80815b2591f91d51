import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { SchemaFieldBuilder } from "./schema-field-builder";
import type { SchemaField } from "./schema-fields";

function Harness() {
  const [fields, setFields] = useState<SchemaField[]>([]);
  return <SchemaFieldBuilder title="Input Schema" fields={fields} onChange={setFields} />;
}

function preview(): unknown {
  const figure = screen.getByRole("figure", { name: "Input Schema: Generated Schema Preview" });
  return JSON.parse(within(figure).getByText(/"type": "object"/).textContent ?? "");
}

function fieldset(position: number, name: string) {
  return within(screen.getByRole("group", { name: `Field ${position}: ${name}` }));
}

describe("schema field builder", () => {
  it("starts empty and shows the live schema as fields are added", async () => {
    render(<Harness />);

    expect(screen.getByText('No fields defined yet. Click "Add Field" to get started.')).toBeDefined();
    expect(preview()).toEqual({ type: "object", properties: {}, required: [], additionalProperties: false });

    await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
    const first = fieldset(1, "field 1");
    await userEvent.type(first.getByLabelText("Field Name"), "topic");
    const topic = fieldset(1, "topic");
    await userEvent.click(topic.getByLabelText("Required"));
    await userEvent.type(topic.getByLabelText("Description"), "What to write about");
    await userEvent.type(topic.getByLabelText("Min Length"), "2");
    await userEvent.type(topic.getByLabelText("Max Length"), "40");
    await userEvent.click(topic.getByLabelText("Pattern (Regex)"));
    await userEvent.paste("^[a-z]+$");
    await userEvent.type(topic.getByLabelText("Allowed Values"), " tea {enter}{enter}coffee ");
    expect(topic.queryByLabelText("Minimum")).toBeNull();

    expect(preview()).toEqual({
      type: "object",
      properties: {
        topic: {
          type: "string",
          description: "What to write about",
          minLength: 2,
          maxLength: 40,
          pattern: "^[a-z]+$",
          enum: ["tea", "coffee"],
        },
      },
      required: ["topic"],
      additionalProperties: false,
    });
  });

  it("offers Minimum/Maximum for numbers and No default/True/False for booleans", async () => {
    render(<Harness />);

    await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
    await userEvent.type(fieldset(1, "field 1").getByLabelText("Field Name"), "words");
    await userEvent.selectOptions(fieldset(1, "words").getByLabelText("Type"), "integer");
    await userEvent.type(fieldset(1, "words").getByLabelText("Minimum"), "10");
    await userEvent.type(fieldset(1, "words").getByLabelText("Maximum"), "99");
    expect(fieldset(1, "words").queryByLabelText("Min Length")).toBeNull();

    await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
    await userEvent.type(fieldset(2, "field 2").getByLabelText("Field Name"), "formal");
    await userEvent.selectOptions(fieldset(2, "formal").getByLabelText("Type"), "boolean");
    const defaults = fieldset(2, "formal").getByLabelText("Default Value") as HTMLSelectElement;
    expect(Array.from(defaults.options).map((option) => option.text)).toEqual([
      "No default",
      "True",
      "False",
    ]);
    await userEvent.selectOptions(defaults, "false");

    expect(preview()).toMatchObject({
      properties: {
        words: { type: "integer", minimum: 10, maximum: 99 },
        formal: { type: "boolean", default: false },
      },
    });
  });

  it("offers Allowed Values, one per line, for boolean, array and object fields too", async () => {
    render(<Harness />);
    const add = async (position: number, name: string, type: string) => {
      await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
      await userEvent.type(fieldset(position, `field ${position}`).getByLabelText("Field Name"), name);
      await userEvent.selectOptions(fieldset(position, name).getByLabelText("Type"), type);
      return fieldset(position, name).getByLabelText("Allowed Values");
    };

    await userEvent.type(await add(1, "formal", "boolean"), "true{enter}maybe");
    await userEvent.type(await add(2, "tags", "array"), "tea{enter} coffee ");
    const sizes = await add(3, "size", "object");
    await userEvent.click(sizes);
    await userEvent.paste('{"cup": "S"}\n{"cup": "L"}');

    expect(preview()).toMatchObject({
      properties: {
        formal: { type: "boolean", enum: [true] },
        tags: { type: "array", items: { type: "string", enum: ["tea", "coffee"] } },
        size: { type: "object", enum: [{ cup: "S" }, { cup: "L" }] },
      },
    });
    expect(fieldset(2, "tags").getByText(/each item must be one of them/)).toBeDefined();
  });

  it("moves fields up and down and deletes them", async () => {
    render(<Harness />);
    for (const name of ["a", "b", "c"]) {
      await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
      const inputs = screen.getAllByLabelText("Field Name");
      await userEvent.type(inputs[inputs.length - 1] as HTMLElement, name);
    }
    const order = () => Object.keys((preview() as { properties: object }).properties);
    expect(order()).toEqual(["a", "b", "c"]);
    expect((screen.getByRole("button", { name: "Move a up" }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole("button", { name: "Move c down" }) as HTMLButtonElement).disabled).toBe(true);

    await userEvent.click(screen.getByRole("button", { name: "Move c up" }));
    expect(order()).toEqual(["a", "c", "b"]);
    await userEvent.click(screen.getByRole("button", { name: "Move a down" }));
    expect(order()).toEqual(["c", "a", "b"]);
    await userEvent.click(screen.getByRole("button", { name: "Delete a" }));
    expect(order()).toEqual(["c", "b"]);
  });

  it("flags a name the API would refuse", async () => {
    render(<Harness />);
    await userEvent.click(screen.getByRole("button", { name: "+ Add Field" }));
    await userEvent.type(screen.getByLabelText("Field Name"), "my topic");

    expect(screen.getByLabelText("Field Name").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByText(/Use letters, digits and underscores/)).toBeDefined();
  });
});
