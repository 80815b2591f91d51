import { describe, expect, it } from "vitest";
import type { LlmRequest } from "../models/llm.ts";
import { countTokens } from "../models/token-count.ts";
import {
  callWorstCase,
  countCallInputTokens,
  creatorPromptCount,
  maxInputTokens,
  publishedInputLimit,
  refuseOversizedCall,
} from "./call-worst-case.ts";

// The worst case of a prepared call (docs/decisions/063): the creator's prompt as the guard counts
// it, everything the caller adds one token per UTF-8 byte, max_tokens at the output price.

const creator = creatorPromptCount({
  model: "gpt-4-turbo",
  systemPrompt: "You are terse.",
  promptTemplate: "Topic: {{topic}} and again {{topic}}",
  outputSchema: null,
});

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: "gpt-4-turbo",
    system: "You are terse.",
    messages: [{ role: "user", content: "Topic: rain and again rain" }],
    temperature: 1,
    maxTokens: 100,
    topP: 1,
    frequencyPenalty: 0,
    presencePenalty: 0,
    ...overrides,
  };
}

describe("a prepared call's worst case", () => {
  it("counts the creator's prompt by the guard's tokenizer and each value placed, per use, by its bytes", () => {
    expect(creator.tokens).toBe(countTokens("You are terse.\nTopic:  and again "));
    // "rain" twice: 8 bytes.
    expect(countCallInputTokens(request(), creator)).toBe(creator.tokens + 8);
    // A multi-byte value counts its bytes: "é" is 2.
    const accented = request({ messages: [{ role: "user", content: "Topic: é and again é" }] });
    expect(countCallInputTokens(accented, creator)).toBe(creator.tokens + 4);
  });

  it("counts history, instructions, tool calls, tool results and the tools' JSON as sent", () => {
    const tools = {
      tools: [{ name: "weather", description: "d".repeat(1000), parameters: { type: "object" } }],
    };
    const loop = request({
      system: "You are terse.\n\nFurther instructions from the caller: be kind",
      messages: [
        { role: "user", content: "earlier question" },
        { role: "assistant", content: "earlier answer" },
        { role: "user", content: "Topic: rain and again rain" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "weather", arguments: '{"city":"Rome"}' }],
        },
        { role: "tool", toolCallId: "c1", content: "r".repeat(500) },
      ],
      tools,
    });
    const instructions = Buffer.byteLength("\n\nFurther instructions from the caller: be kind");
    const history = "earlier question".length + "earlier answer".length + 2 * 4;
    const toolCall = 4 + "c1".length + "weather".length + '{"city":"Rome"}'.length;
    const toolResult = 4 + 500 + "c1".length;
    const toolsJson = JSON.stringify(tools).length;
    expect(countCallInputTokens(loop, creator)).toBe(
      creator.tokens + 8 + instructions + history + toolCall + toolResult + toolsJson,
    );
  });

  it("prices the count and max_tokens, and refuses above the share naming the limit and the count", () => {
    const worst = callWorstCase(
      request({ messages: [{ role: "user", content: `Topic: ${"x".repeat(9_000)} and again ` }] }),
      creator,
    );
    // gpt-4-turbo: 10 µ$ a token in, 30 out.
    expect(worst.micros).toBe(worst.inputTokens * 10 + 100 * 30);
    // 9¢ share: (90,000 − 3,000) / 10 = 8,700 tokens.
    expect(maxInputTokens("gpt-4-turbo", 100, 90_000)).toBe(8_700);
    expect(() => refuseOversizedCall(worst, 90_000)).toThrow(/above the 8,700 input tokens/);
    expect(() => refuseOversizedCall(worst, 90_000)).toThrow(
      new RegExp(`counts ${worst.inputTokens.toLocaleString("en-US")} tokens`),
    );
    expect(() => refuseOversizedCall(worst, worst.micros)).not.toThrow();
  });

  it("publishes no limit on the creator's keys or a free model, 0 when max_tokens alone is not covered", () => {
    expect(
      publishedInputLimit({ model: "gpt-4-turbo", maxTokens: 100, modelKeys: "creator" }, 10, 10),
    ).toBeNull();
    expect(
      publishedInputLimit({ model: "sandbox", maxTokens: 100, modelKeys: "platform" }, 10, 10),
    ).toBeNull();
    expect(publishedInputLimit(null, 10, 10)).toBeNull();
    expect(publishedInputLimit({ model: "gpt-4", maxTokens: 4_000, modelKeys: "platform" }, 1, 10)).toBe(0);
    expect(publishedInputLimit({ model: "gpt-4-turbo", maxTokens: 100, modelKeys: "platform" }, 10, 10)).toBe(
      8_700,
    );
  });
});
