import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";

let encoder: Tiktoken | undefined;

/** Tokens of a text with OpenAI's cl100k tokenizer: what the sandbox model reports as usage. */
export function countTokens(text: string): number {
  encoder ??= new Tiktoken(cl100k);
  return encoder.encode(text).length;
}
