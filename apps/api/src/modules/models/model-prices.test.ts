import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config.ts";
import { MODEL_CATALOG } from "./model-catalog.ts";
import {
  BUILT_IN_PRICES,
  formatUsd4,
  minimumPriceCents,
  modelCostMicros,
  netOfFeeMicros,
  parseModelPricesFile,
  priceAt,
  worstCaseCostMicros,
  worstCaseInputTokens,
} from "./model-prices.ts";

const at = (d: string) => new Date(`${d}T12:00:00Z`);
const T = BUILT_IN_PRICES;

describe("model prices", () => {
  it("has a price today for every model of the catalog, the sandbox at 0", () => {
    for (const model of MODEL_CATALOG) {
      const row = priceAt(model.id, new Date(), T);
      expect(row, model.id).toBeDefined();
      if (model.id === "sandbox") expect(row).toMatchObject({ inputPerMillion: 0, outputPerMillion: 0 });
      else expect(row?.outputPerMillion, model.id).toBeGreaterThan(0);
    }
  });

  it("computes costs against hand-computed figures, rounding once and up", () => {
    // gpt-4o from 2024-10-01: $2.50 in, $10 out, $1.25 cached per million tokens.
    // 600 × 2.5 + 400 × 1.25 + 500 × 10 = 1500 + 500 + 5000 = 7000 micro-dollars.
    expect(
      modelCostMicros(
        "gpt-4o",
        { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500 },
        at("2025-01-01"),
        T,
      ),
    ).toBe(7000);
    // The row in force at the call's time: on 2024-06-01 gpt-4o was $5 / $15: 5000 + 7500.
    expect(modelCostMicros("gpt-4o", { inputTokens: 1000, outputTokens: 500 }, at("2024-06-01"), T)).toBe(
      12_500,
    );
    // gpt-4o-mini: 7 × 0.15 + 3 × 0.60 = 1.05 + 1.80 = 2.85 → 3 (up).
    expect(modelCostMicros("gpt-4o-mini", { inputTokens: 7, outputTokens: 3 }, at("2025-01-01"), T)).toBe(3);
    // claude-3-haiku: 3 × 0.25 + 1 × 1.25 = 2.00 exactly: rounding per part would give 1 + 2 = 3.
    expect(modelCostMicros("claude-3-haiku", { inputTokens: 3, outputTokens: 1 }, at("2025-01-01"), T)).toBe(
      2,
    );
    // One input token of haiku is a quarter micro: billed as 1.
    expect(modelCostMicros("claude-3-haiku", { inputTokens: 1, outputTokens: 0 }, at("2025-01-01"), T)).toBe(
      1,
    );
    // claude-3-opus, 8192 output tokens at $75: 614,400 micros ($0.6144).
    expect(
      modelCostMicros("claude-3-opus", { inputTokens: 0, outputTokens: 8192 }, at("2025-01-01"), T),
    ).toBe(614_400);
    // A model without a cached price bills cached tokens as input: gpt-4 1000 × 30 = 30,000.
    expect(
      modelCostMicros(
        "gpt-4",
        { inputTokens: 1000, cachedInputTokens: 1000, outputTokens: 0 },
        at("2025-01-01"),
        T,
      ),
    ).toBe(30_000);
    // Cached tokens are capped at the input tokens; junk counts are 0.
    expect(
      modelCostMicros(
        "gpt-4o",
        { inputTokens: 10, cachedInputTokens: 99, outputTokens: Number.NaN },
        at("2025-01-01"),
        T,
      ),
    ).toBe(13); // 10 × 1.25 = 12.5 → 13
    // Dated rows switch at their date: gemini-pro 1M input on each side of 2024-10-01.
    expect(
      modelCostMicros("gemini-pro", { inputTokens: 1_000_000, outputTokens: 0 }, at("2024-09-30"), T),
    ).toBe(3_500_000);
    expect(
      modelCostMicros("gemini-pro", { inputTokens: 1_000_000, outputTokens: 0 }, at("2024-10-01"), T),
    ).toBe(1_250_000);
    expect(modelCostMicros("sandbox", { inputTokens: 5000, outputTokens: 5000 }, new Date(), T)).toBe(0);
    // Large counts stay exact (BigInt): 10 billion output tokens of opus = $750,000.
    expect(
      modelCostMicros("claude-3-opus", { inputTokens: 0, outputTokens: 1e10 }, at("2025-01-01"), T),
    ).toBe(750_000_000_000);
  });

  it("bounds the worst case by max_tokens, the template and declared maxLength", () => {
    const settings = {
      model: "claude-3-opus",
      maxTokens: 8192,
      systemPrompt: "",
      promptTemplate: "{{topic}}",
      inputSchema: {
        type: "object" as const,
        properties: { topic: { type: "string" as const, maxLength: 100 } },
        required: [],
        additionalProperties: false as const,
      },
      outputSchema: null,
    };
    // The template without its placeholder is "\n": 1 token; plus 100 for topic's maxLength.
    expect(worstCaseInputTokens(settings)).toBe(101);
    const worst = worstCaseCostMicros(settings, at("2025-01-01"), T);
    // 8192 × 75 + 101 × 15 = 614,400 + 1,515 = 615,915 micros.
    expect(worst.micros).toBe(615_915);
    expect(formatUsd4(worst.micros)).toBe("$0.6160");
    // Needs 615,915 / 0.9 = 684,350 micros after a 10% fee: 69 cents (68 leaves 612,000).
    expect(minimumPriceCents(worst.micros, 10)).toBe(69);
    expect(netOfFeeMicros(69, 10)).toBeGreaterThanOrEqual(615_915);
    expect(netOfFeeMicros(68, 10)).toBeLessThan(615_915);
    expect(minimumPriceCents(9000, 10)).toBe(1);
    expect(minimumPriceCents(9001, 10)).toBe(2);
    expect(minimumPriceCents(1, 100)).toBeNull();
    expect(minimumPriceCents(0, 100)).toBe(1);
  });

  it("reads an operator's file: rows added by date, same date replaced, bad files named", () => {
    const table = parseModelPricesFile(
      JSON.stringify({
        models: {
          "gpt-4o": [
            { from: "2030-01-01", input: 1, output: 2, cached_input: 0.5 },
            { from: "2024-10-01", input: 2, output: 9 },
          ],
        },
      }),
    );
    expect(modelCostMicros("gpt-4o", { inputTokens: 1e6, outputTokens: 0 }, at("2031-01-01"), table)).toBe(
      1e6,
    );
    expect(modelCostMicros("gpt-4o", { inputTokens: 0, outputTokens: 1e6 }, at("2025-01-01"), table)).toBe(
      9e6,
    );
    // The built-in table is untouched.
    expect(modelCostMicros("gpt-4o", { inputTokens: 0, outputTokens: 1e6 }, at("2025-01-01"), T)).toBe(10e6);
    expect(() => parseModelPricesFile("{")).toThrow(/not valid JSON/);
    expect(() =>
      parseModelPricesFile(
        JSON.stringify({ models: { "gpt-5x": [{ from: "2025-01-01", input: 1, output: 1 }] } }),
      ),
    ).toThrow(/models\.gpt-5x is not a model of the catalog/);
    expect(() =>
      parseModelPricesFile(
        JSON.stringify({ models: { "gpt-4o": [{ from: "2025-01-01", input: -1, output: 1 }] } }),
      ),
    ).toThrow(/models\.gpt-4o\.0\.input must not be negative/);
    expect(() =>
      parseModelPricesFile(
        JSON.stringify({ models: { "gpt-4o": [{ from: "2025-1-1", input: 1, output: 1.0000001 }] } }),
      ),
    ).toThrow(/from must be a date YYYY-MM-DD.*output must have at most 6 decimals/);
  });

  it("stops start-up on a bad MODEL_PRICES_FILE, naming the variable and the problem", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pm-prices-"));
    const bad = path.join(dir, "prices.json");
    writeFileSync(
      bad,
      JSON.stringify({ models: { "gpt-4o": [{ from: "2025-01-01", input: "cheap", output: 1 }] } }),
    );
    expect(() => loadConfig({ DATA_DIR: dir, MODEL_PRICES_FILE: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dir, MODEL_PRICES_FILE: bad })).toThrow(
      /MODEL_PRICES_FILE: .*prices\.json: models\.gpt-4o\.0\.input must be a number/,
    );
    expect(() => loadConfig({ DATA_DIR: dir, MODEL_PRICES_FILE: path.join(dir, "missing.json") })).toThrow(
      /MODEL_PRICES_FILE: cannot be read \(ENOENT/,
    );
    const good = path.join(dir, "good.json");
    writeFileSync(
      good,
      JSON.stringify({ models: { sandbox: [{ from: "2020-01-01", input: 1, output: 1 }] } }),
    );
    const config = loadConfig({ DATA_DIR: dir, MODEL_PRICES_FILE: good });
    expect(
      modelCostMicros("sandbox", { inputTokens: 1e6, outputTokens: 0 }, new Date(), config.modelPrices),
    ).toBe(1e6);
  });
});
