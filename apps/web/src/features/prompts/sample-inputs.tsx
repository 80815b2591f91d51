import type { IoSchema, TestConfigRequest } from "@promptmint/contracts";
import { useState } from "react";
import { TextField } from "../../components/ui/text-field";
import { parseSampleInput, sampleInputText, sampleValueOf } from "../../lib/template-variables";

/** The test inputs of a schema: samples from the schema until the person edits them. */
export function useSampleInputs(schema: IoSchema) {
  const [edited, setEdited] = useState<Record<string, string>>({});
  const entries = Object.entries(schema.properties).map(([name, property]) => ({
    name,
    property,
    text: edited[name] ?? sampleInputText(sampleValueOf(name, property)),
  }));
  const testInputs: TestConfigRequest["test_inputs"] = Object.fromEntries(
    entries.map(({ name, property, text }) => [name, parseSampleInput(text, property)]),
  );
  const setText = (name: string, text: string) => setEdited((current) => ({ ...current, [name]: text }));
  return { entries, testInputs, setText };
}

export function SampleInputs({ sample }: { sample: ReturnType<typeof useSampleInputs> }) {
  return (
    <fieldset className="space-y-3">
      <legend className="text-sm font-medium text-slate-700">Sample Inputs</legend>
      {sample.entries.length === 0 ? (
        <p className="text-sm text-slate-500">The input schema has no fields, so the test sends no inputs.</p>
      ) : (
        <div className="grid gap-3 sm:grid-cols-2">
          {sample.entries.map(({ name, property, text }) => (
            <TextField
              key={name}
              label={name}
              hint={property.description ? `${property.type} — ${property.description}` : property.type}
              value={text}
              onChange={(event) => sample.setText(name, event.target.value)}
            />
          ))}
        </div>
      )}
    </fieldset>
  );
}
