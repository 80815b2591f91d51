import type { ModelKeyProvider } from "@promptmint/contracts";
import { useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { useDeleteModelKey, useModelKeys, useSaveModelKey } from "../../lib/model-cost-query";

const LABELS: Record<ModelKeyProvider, string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  google: "Google (Gemini)",
  mistral: "Mistral",
};

/**
 * A creator's own model keys (docs/decisions/026): prompt apps set to "My own key" call the vendor
 * with them, so the vendor bills the creator and no model cost is taken from calls. Keys are
 * stored encrypted and only ever shown as •••• and their last 4 characters.
 */
export function ModelKeysSection() {
  const keys = useModelKeys();
  const save = useSaveModelKey();
  const remove = useDeleteModelKey();
  const [drafts, setDrafts] = useState<Partial<Record<ModelKeyProvider, string>>>({});
  return (
    <Card>
      <CardHeader
        title="Model keys"
        description="Your own API keys, for prompt apps that run on your keys. Stored encrypted; shown masked."
      />
      <CardBody className="space-y-4">
        {save.isError && (
          <p role="alert" className="text-sm text-red-700">
            {getErrorMessage(save.error)}
          </p>
        )}
        {(keys.data?.keys ?? []).map((key) => (
          <div key={key.provider} className="flex flex-wrap items-end gap-3">
            <TextField
              className="min-w-64 flex-1"
              label={`${LABELS[key.provider]} key`}
              type="password"
              autoComplete="off"
              placeholder={key.masked_key ?? "Not set"}
              value={drafts[key.provider] ?? ""}
              hint={key.masked_key ? `Set: ${key.masked_key}` : undefined}
              onChange={(event) => setDrafts({ ...drafts, [key.provider]: event.target.value })}
            />
            <Button
              size="sm"
              disabled={!drafts[key.provider]}
              onClick={() =>
                save.mutate(
                  { provider: key.provider, apiKey: drafts[key.provider] ?? "" },
                  { onSuccess: () => setDrafts({ ...drafts, [key.provider]: "" }) },
                )
              }
            >
              {key.configured ? "Replace" : "Save"}
            </Button>
            {key.configured && (
              <Button size="sm" variant="secondary" onClick={() => remove.mutate(key.provider)}>
                Delete
              </Button>
            )}
          </div>
        ))}
      </CardBody>
    </Card>
  );
}
