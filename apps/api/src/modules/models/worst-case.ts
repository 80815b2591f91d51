import type { LlmRequest } from "./llm.ts";
import { modelCostMicros, type PriceTable } from "./model-prices.ts";
import { countTokens } from "./token-count.ts";

/**
 * The most one prepared model call can cost at its vendor (issue 37, docs/decisions/062): its
 * actual input (the rendered system prompt, every message, tool calls and results, the tools'
 * definitions and the output schema, counted with cl100k) at the input price, plus `max_tokens`
 * at the output price. The one definition every prepaid call holds (billing/call-payment/
 * model-cost-holds.ts) and eval estimates use; a call's answer can never bill more output than
 * `max_tokens`. Other vendors' tokenizers and the chat format's per-message framing can count a
 * little more input than cl100k, hence the margin: a quarter more, and 16 tokens per message plus
 * 64 for the request, well above OpenAI's documented 3–4 tokens of framing per message.
 */
export function requestWorstCaseMicros(
  request: Pick<
    LlmRequest,
    "model" | "system" | "messages" | "maxTokens" | "tools" | "outputSchema" | "responseFormat"
  >,
  at: Date = new Date(),
  table?: PriceTable,
): number {
  const inputTokens = worstCaseInputTokensOf(request);
  return modelCostMicros(request.model, { inputTokens, outputTokens: request.maxTokens }, at, table);
}

/** The input tokens a request may be billed for, with the margin above. */
export function worstCaseInputTokensOf(
  request: Pick<LlmRequest, "system" | "messages" | "tools" | "outputSchema" | "responseFormat">,
): number {
  const parts: string[] = [request.system ?? ""];
  for (const message of request.messages) {
    parts.push(message.content);
    if (message.role === "assistant" && message.toolCalls) parts.push(JSON.stringify(message.toolCalls));
  }
  if (request.tools) parts.push(JSON.stringify(request.tools.tools));
  if (request.outputSchema) parts.push(JSON.stringify(request.outputSchema));
  if (request.responseFormat) parts.push(JSON.stringify(request.responseFormat));
  const counted = countTokens(parts.join("\n"));
  return Math.ceil(counted * 1.25) + 16 * (request.messages.length + 1) + 64;
}
