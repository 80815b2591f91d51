import type { ModelKeysMode } from "@promptmint/contracts";
import { Link } from "react-router";
import { SelectField } from "../../components/ui/select-field";
import { useModelKeys } from "../../lib/model-cost-query";
import { useModelCatalog } from "../../lib/models-query";

/**
 * Whose keys the app's calls use (docs/decisions/026): the platform's (the model cost comes out
 * of each call's share) or the creator's own for the model's provider. "My own key" is offered
 * only when the creator has a key for that provider; otherwise the field names the missing one.
 */
export function ModelKeysField({
  model,
  value,
  error,
  onChange,
}: {
  model: string;
  value: ModelKeysMode;
  error?: string;
  onChange: (value: ModelKeysMode) => void;
}) {
  const catalog = useModelCatalog();
  const keys = useModelKeys();
  const provider = catalog.data?.models.find((m) => m.id === model)?.provider;
  const keyProvider = provider === "openai-compatible" ? "openai" : provider;
  const needsKey = keyProvider !== undefined && keyProvider !== "sandbox";
  const hasKey = !needsKey || Boolean(keys.data?.keys.find((k) => k.provider === keyProvider)?.configured);
  const missing =
    value === "creator" && !hasKey
      ? `No ${keyProvider} key is set: add one under Profile → Model keys`
      : undefined;
  return (
    <div>
      <SelectField
        label="Model Keys"
        options={[
          { value: "platform", label: "Platform keys (model cost from each call)" },
          {
            value: "creator",
            label: hasKey ? `My own ${keyProvider ?? ""} key`.trim() : `My own ${keyProvider} key (none set)`,
          },
        ]}
        value={value}
        error={error ?? missing}
        onChange={(event) => onChange(event.target.value as ModelKeysMode)}
      />
      {needsKey && !hasKey && (
        <p className="mt-1.5 text-xs text-slate-500">
          To run on your own {keyProvider} key, <Link to="/profile">add it in your profile</Link>.
        </p>
      )}
    </div>
  );
}
