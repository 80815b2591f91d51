import { readFileSync } from "node:fs";
import type { IoSchema } from "@promptmint/contracts";
import { z } from "zod";
import { MODEL_CATALOG } from "./model-catalog.ts";
import { countTokens } from "./token-count.ts";

/**
 * What models cost at their vendors (docs/decisions/026-model-cost.md): a dated price table per
 * model, in integer MICRO-DOLLARS PER MILLION TOKENS ($2.50 per million = 2_500_000), so a call's
 * cost is exact integer arithmetic rounded once, up, to the micro-dollar.
 *
 * Several rows per model: the row in force at a call's time is the one with the latest `from` at
 * or before it. The operator's MODEL_PRICES_FILE adds rows (a row on the same date replaces the
 * built-in one); see `parseModelPricesFile`.
 */
export interface ModelPriceRow {
  /** When this price took effect (UTC midnight of the vendor's announced date). */
  from: Date;
  inputPerMillion: number;
  outputPerMillion: number;
  /** Cache-read input; null where the vendor has no cached-input price (cached tokens bill as input). */
  cachedInputPerMillion: number | null;
}

export type PriceTable = ReadonlyMap<string, readonly ModelPriceRow[]>;

/** 1 USD = 1,000,000 micros; 1 cent = 10,000 micros (the ledger's unit, lib/money.ts). */
export const MICROS_PER_CENT = 10_000;
const MICROS_PER_USD = 1_000_000;

/** USD per million tokens as the vendors publish them; converted to integer micros below. */
type Published = [from: string, input: number, output: number, cachedInput: number | null];

/**
 * The vendors' published list prices (standard tier, text, shortest context band) for the vendor
 * model each catalog id calls (model-catalog.ts `vendorModel`). Sources: openai.com/api/pricing,
 * anthropic.com/pricing (cache reads), ai.google.dev/gemini-api/docs/pricing (context caching),
 * mistral.ai/pricing. Aliases price as the model they call.
 */
const PUBLISHED: Record<string, Published[]> = {
  "gpt-4-turbo": [["2023-11-06", 10, 30, null]],
  "gpt-4": [["2023-03-14", 30, 60, null]],
  gpt4: [["2023-03-14", 30, 60, null]],
  "gpt-4o": [
    ["2024-05-13", 5, 15, null],
    ["2024-08-06", 2.5, 10, null],
    ["2024-10-01", 2.5, 10, 1.25],
  ],
  "gpt-4o-mini": [
    ["2024-07-18", 0.15, 0.6, null],
    ["2024-10-01", 0.15, 0.6, 0.075],
  ],
  "gpt-4.1": [["2025-04-14", 2, 8, 0.5]],
  "claude-3-opus": [["2024-03-04", 15, 75, 1.5]],
  "claude-3-sonnet": [["2024-03-04", 3, 15, 0.3]],
  "claude-3-haiku": [["2024-03-13", 0.25, 1.25, 0.03]],
  claude3: [["2024-06-20", 3, 15, 0.3]],
  "claude-sonnet-4-5": [["2025-09-29", 3, 15, 0.3]],
  "claude-haiku-4-5": [["2025-10-15", 1, 5, 0.1]],
  "gemini-pro": [
    ["2024-05-14", 3.5, 10.5, 0.875],
    ["2024-10-01", 1.25, 5, 0.3125],
  ],
  "gemini-2.5-pro": [["2025-06-17", 1.25, 10, 0.31]],
  "gemini-2.5-flash": [["2025-06-17", 0.3, 2.5, 0.075]],
  gemini: [["2025-06-17", 0.3, 2.5, 0.075]],
  mixtral: [["2024-04-17", 2, 6, null]],
  "mistral-large": [
    ["2024-07-24", 3, 9, null],
    ["2024-09-18", 2, 6, null],
  ],
  sandbox: [["2000-01-01", 0, 0, 0]],
};

/** USD per million tokens → integer micros per million; more than 6 decimals is an error (not exact). */
function toMicrosPerMillion(usd: number): number | undefined {
  const micros = Math.round(usd * MICROS_PER_USD);
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(micros - usd * MICROS_PER_USD) > 1e-3) return undefined;
  return micros;
}

function day(text: string): Date {
  return new Date(`${text}T00:00:00.000Z`);
}

function builtInTable(): Map<string, ModelPriceRow[]> {
  const table = new Map<string, ModelPriceRow[]>();
  for (const [model, rows] of Object.entries(PUBLISHED)) {
    table.set(
      model,
      rows.map(([from, input, output, cached]) => ({
        from: day(from),
        inputPerMillion: toMicrosPerMillion(input) as number,
        outputPerMillion: toMicrosPerMillion(output) as number,
        cachedInputPerMillion: cached === null ? null : (toMicrosPerMillion(cached) as number),
      })),
    );
  }
  return table;
}

export const BUILT_IN_PRICES: PriceTable = builtInTable();

const usdPerMillion = z
  .number({ error: "must be a number of US dollars per million tokens" })
  .min(0, "must not be negative")
  .max(100_000, "must be at most 100000 dollars per million tokens")
  .refine((v) => toMicrosPerMillion(v) !== undefined, "must have at most 6 decimals (micro-dollars)");
const FileRowSchema = z.strictObject({
  from: z
    .string()
    .refine(
      (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(day(v).getTime()),
      "must be a date YYYY-MM-DD",
    ),
  input: usdPerMillion,
  output: usdPerMillion,
  cached_input: usdPerMillion.nullable().optional(),
});
const FileSchema = z.strictObject({
  models: z.record(z.string(), z.array(FileRowSchema).min(1, "must list at least one dated price")),
});

/**
 * MODEL_PRICES_FILE: `{"models": {"gpt-4o": [{"from": "2025-01-01", "input": 2.5, "output": 10,
 * "cached_input": 1.25}]}}` in US dollars per million tokens. Each model's rows are added to the
 * built-in ones (a row with the same `from` replaces the built-in row of that date). A model the
 * catalog does not know is an error (a typo would otherwise silently price nothing). Returns the
 * merged table, or throws an Error whose message names every problem (config.ts reports it).
 */
export function parseModelPricesFile(text: string, base: PriceTable = BUILT_IN_PRICES): PriceTable {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`is not valid JSON (${error instanceof Error ? error.message : "parse error"})`);
  }
  const parsed = FileSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"} ${i.message}`).join("; "),
    );
  }
  const known = new Set(MODEL_CATALOG.map((m) => m.id));
  const unknown = Object.keys(parsed.data.models).filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new Error(`models.${unknown[0]} is not a model of the catalog (known: ${[...known].join(", ")})`);
  const table = new Map<string, ModelPriceRow[]>();
  for (const [model, rows] of base) table.set(model, [...rows]);
  for (const [model, rows] of Object.entries(parsed.data.models)) {
    const merged = new Map((table.get(model) ?? []).map((row) => [row.from.getTime(), row]));
    for (const row of rows) {
      const from = day(row.from);
      merged.set(from.getTime(), {
        from,
        inputPerMillion: toMicrosPerMillion(row.input) as number,
        outputPerMillion: toMicrosPerMillion(row.output) as number,
        cachedInputPerMillion:
          row.cached_input === undefined || row.cached_input === null
            ? null
            : (toMicrosPerMillion(row.cached_input) as number),
      });
    }
    table.set(
      model,
      [...merged.values()].sort((a, b) => a.from.getTime() - b.from.getTime()),
    );
  }
  return table;
}

/** Reads and parses MODEL_PRICES_FILE; the error names the file and the problem. */
export function loadModelPricesFile(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}: ${file})`);
  }
  try {
    return parseModelPricesFile(text);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

let active: PriceTable = BUILT_IN_PRICES;

/** The table every cost is computed from (the server sets it once at start-up from its config). */
export function useModelPrices(table: PriceTable): void {
  active = table;
}

export function activeModelPrices(): PriceTable {
  return active;
}

/** The row in force at `at`: the latest `from` at or before it. */
export function priceAt(modelId: string, at: Date, table: PriceTable = active): ModelPriceRow | undefined {
  const rows = table.get(modelId);
  if (!rows) return undefined;
  let found: ModelPriceRow | undefined;
  for (const row of rows) if (row.from.getTime() <= at.getTime()) found = row;
  return found;
}

export interface TokenUsage {
  /** Every input token, cached ones included (the OpenAI convention; see the doc). */
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` read from the vendor's prompt cache. */
  cachedInputTokens?: number;
}

const count = (n: number | undefined) =>
  Number.isFinite(n) && (n as number) > 0 ? Math.floor(n as number) : 0;

/**
 * What a call cost at its vendor, in integer micro-dollars: Σ tokens × (micros per million),
 * divided by a million once and rounded up. Cached tokens (at most the input tokens) bill at the
 * cached price where the vendor has one, else as input. A model without a price at `at` (before
 * its first row, or not in the table) costs 0: the catalog and the table are checked to match by
 * a test, so this happens only for calls dated before a model's first price.
 */
export function modelCostMicros(
  modelId: string,
  usage: TokenUsage,
  at: Date,
  table: PriceTable = active,
): number {
  const price = priceAt(modelId, at, table);
  if (!price) return 0;
  const input = count(usage.inputTokens);
  const cached = Math.min(count(usage.cachedInputTokens), input);
  const output = count(usage.outputTokens);
  const cachedRate = price.cachedInputPerMillion ?? price.inputPerMillion;
  const scaled =
    BigInt(input - cached) * BigInt(price.inputPerMillion) +
    BigInt(cached) * BigInt(cachedRate) +
    BigInt(output) * BigInt(price.outputPerMillion);
  const million = BigInt(MICROS_PER_USD);
  return Number((scaled + million - 1n) / million);
}

/** What the worst case is computed from: a prompt app's settings and active version. */
export interface WorstCaseSettings {
  model: string;
  maxTokens: number;
  systemPrompt: string;
  promptTemplate: string;
  inputSchema: IoSchema | null;
  outputSchema: IoSchema | null;
}

export interface WorstCase {
  micros: number;
  inputTokens: number;
  outputTokens: number;
  model: string;
}

/**
 * The most one call can cost at the vendor, as far as the settings bound it (doc 026): `max_tokens`
 * at the output price, plus as input the system prompt and template (placeholders removed), the
 * output schema instruction the gateway adds, and for each input the schema declares a
 * `maxLength` for, that many tokens (one token per character: a tokenizer never makes more
 * tokens than characters for ordinary text). Inputs without a `maxLength` and chat history are
 * not bounded by the settings and count 0. Priced at `at` (default now).
 */
export function worstCaseCostMicros(
  settings: WorstCaseSettings,
  at: Date = new Date(),
  table: PriceTable = active,
): WorstCase {
  const inputTokens = worstCaseInputTokens(settings);
  const outputTokens = Math.max(0, Math.floor(settings.maxTokens));
  return {
    micros: modelCostMicros(settings.model, { inputTokens, outputTokens }, at, table),
    inputTokens,
    outputTokens,
    model: settings.model,
  };
}

const PLACEHOLDER = /\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}/g;

export function worstCaseInputTokens(settings: WorstCaseSettings): number {
  let text = `${settings.systemPrompt.replace(PLACEHOLDER, "")}\n${settings.promptTemplate.replace(PLACEHOLDER, "")}`;
  if (settings.outputSchema) {
    text += `\n\nAnswer only with one JSON object that matches this JSON schema, and nothing else:\n${JSON.stringify(settings.outputSchema)}`;
  }
  let tokens = countTokens(text);
  for (const property of Object.values(settings.inputSchema?.properties ?? {})) {
    if (property.type === "string" && property.maxLength !== undefined) tokens += property.maxLength;
  }
  return tokens;
}

/** What the creator keeps of a price in cents, in micros, before model cost: price less the platform fee. */
export function netOfFeeMicros(priceCents: number, feePercent: number): number {
  return (priceCents * MICROS_PER_CENT * (100 - feePercent)) / 100;
}

/** The lowest whole-cent price whose share after the fee covers `worstMicros`; null when none can (fee 100%). */
export function minimumPriceCents(worstMicros: number, feePercent: number): number | null {
  if (worstMicros <= 0) return 1;
  if (feePercent >= 100) return null;
  let cents = Math.max(1, Math.ceil((worstMicros * 100) / (MICROS_PER_CENT * (100 - feePercent))));
  // Float guards: step to the exact boundary the check below uses.
  while (cents > 1 && netOfFeeMicros(cents - 1, feePercent) >= worstMicros) cents -= 1;
  while (netOfFeeMicros(cents, feePercent) < worstMicros) cents += 1;
  return cents;
}

/** `$0.6144`: micros as dollars with 4 decimals, rounded up (what a worst case is shown as). */
export function formatUsd4(micros: number): string {
  const hundredths = Math.ceil(micros / 100);
  return `$${Math.floor(hundredths / 10_000)}.${String(hundredths % 10_000).padStart(4, "0")}`;
}

export function formatCents(cents: number): string {
  return `$${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}
