import type { CostEstimateRequest, IoSchema, ModelKeysMode } from "@promptmint/contracts";
import { Alert } from "../../components/ui/alert";
import { formatCents, formatPrice } from "../../lib/format";
import { useCostEstimate } from "../../lib/model-cost-query";
import { useSettled } from "../../lib/use-settled";

export interface CostSettings {
  model: string;
  model_keys: ModelKeysMode;
  max_tokens: string;
  price_cents: number;
  system_prompt?: string;
  prompt_template: string;
  input_schema: IoSchema | null;
  output_schema: IoSchema | null;
}

/** The estimate request for settings that are valid enough to price; null while they are not. */
export function costRequestOf(settings: CostSettings): CostEstimateRequest | null {
  const maxTokens = Number(settings.max_tokens);
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 8192) return null;
  if (!Number.isInteger(settings.price_cents) || settings.price_cents < 1) return null;
  return {
    model: settings.model,
    model_keys: settings.model_keys,
    max_tokens: maxTokens,
    price_cents: settings.price_cents,
    system_prompt: settings.system_prompt ?? "",
    prompt_template: settings.prompt_template,
    input_schema: settings.input_schema,
    output_schema: settings.output_schema,
  };
}

/**
 * The margin of one call at the current settings (docs/decisions/026): the price, the platform's
 * fee, the worst-case model cost (max tokens at the output price plus the template), and what is
 * left. Computed by the server's price table, live as the settings change.
 */
export function ModelCostPanel({
  settings,
  debounceMs = 300,
}: {
  settings: CostSettings;
  debounceMs?: number;
}) {
  const request = useSettled(costRequestOf(settings), debounceMs);
  const estimate = useCostEstimate(request);
  const data = estimate.data;
  return (
    <section
      aria-label="Cost per call"
      className="rounded-lg border border-slate-200 bg-white p-4 text-sm shadow-sm"
    >
      <h3 className="mb-2 font-semibold text-slate-900">Cost per call (worst case)</h3>
      {!request ? (
        <p className="text-slate-500">Set a price and max tokens to see the margin.</p>
      ) : estimate.isError ? (
        <p className="text-slate-500">The cost could not be estimated.</p>
      ) : !data ? (
        <p className="text-slate-500">Estimating…</p>
      ) : (
        <>
          <dl className="grid grid-cols-2 gap-x-4 gap-y-1">
            <dt>Price (gross)</dt>
            <dd data-testid="cost-gross">{formatPrice(data.gross_micros)}</dd>
            <dt>Platform fee</dt>
            <dd data-testid="cost-fee">−{formatPrice(data.fee_micros)}</dd>
            <dt>
              Worst-case model cost
              {data.model_keys === "creator"
                ? " (billed to your own key)"
                : ` (${data.output_tokens} output + ${data.input_tokens} input tokens)`}
            </dt>
            <dd data-testid="cost-model">−{formatPrice(data.model_cost_micros)}</dd>
            <dt className="font-medium">Net to you (worst case)</dt>
            <dd data-testid="cost-net" className="font-medium">
              {formatPrice(data.net_micros)}
            </dd>
          </dl>
          {!data.covered && (
            <Alert tone="error" className="mt-3">
              {data.minimum_price_cents === null
                ? "No price covers the model cost at this platform fee: use your own model keys."
                : `This price cannot cover the worst case: at least ${formatCents(data.minimum_price_cents)} per call, or lower max tokens, choose a cheaper model or use your own keys.`}
            </Alert>
          )}
        </>
      )}
    </section>
  );
}
