// Copy-ready calls of an app's paid endpoints, for the prompt builder and the Explore app page.
// Every sample calls the real gateway routes (Dify-style /api/app/{slug}/…-messages and the
// OpenAI-compatible /api/v1/chat/completions) with the caller's key, or a placeholder for it.

export const API_KEY_PLACEHOLDER = "YOUR_API_KEY";
const END_USER = "customer-42";

export interface AppCallTarget {
  /** Where the API is served, e.g. `https://promptmint.example`. */
  origin: string;
  slug: string;
  mode: "completion" | "chat";
  /** The app's declared input names; each is sent as a `<name>` placeholder. */
  inputNames: readonly string[];
  /** Whether the call carries a `query` (chat apps, workflows, apps without inputs). */
  takesQuery: boolean;
  /** Values the app's input schema accepts (lib/example-inputs.ts); without them, `<name>` placeholders. */
  exampleInputs?: Record<string, unknown>;
  /** The caller's key to put in the samples; API_KEY_PLACEHOLDER when not given. */
  apiKey?: string;
}

export interface CodeSample {
  id: "curl" | "javascript" | "python" | "dify" | "openai";
  label: string;
  code: string;
}

const EXAMPLE_QUERY = "Hello!";
const trimSlash = (url: string) => url.replace(/\/+$/, "");
const indent = (text: string, spaces: number) => text.replaceAll("\n", `\n${" ".repeat(spaces)}`);

/** Each input as a `<name>` placeholder. */
export function placeholderInputsOf(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, `<${name}>`]));
}

const inputsOf = (target: AppCallTarget) => target.exampleInputs ?? placeholderInputsOf(target.inputNames);
const keyOf = (target: Pick<AppCallTarget, "apiKey">) => target.apiKey ?? API_KEY_PLACEHOLDER;

/** A JSON value as a Python literal: JSON's true, false and null are True, False and None there. */
function pythonLiteralOf(value: unknown, spaces: number): string {
  return JSON.stringify(value, null, spaces).replace(
    /("(?:[^"\\]|\\.)*")|\b(true|false|null)\b/g,
    (_match, text: string | undefined, word: string | undefined) =>
      text ?? (word === "true" ? "True" : word === "false" ? "False" : "None"),
  );
}

function requestBodyOf(target: AppCallTarget) {
  return {
    inputs: inputsOf(target),
    ...(target.takesQuery ? { query: EXAMPLE_QUERY } : {}),
    response_mode: "blocking",
    user: END_USER,
  };
}

export function messagesUrlOf(target: Pick<AppCallTarget, "origin" | "slug" | "mode">): string {
  return `${trimSlash(target.origin)}/api/app/${target.slug || "your-app-slug"}/${target.mode}-messages`;
}

export function curlSampleOf(target: AppCallTarget, body: object = requestBodyOf(target)): string {
  const json = JSON.stringify(body, null, 2);
  return [
    `curl -X POST ${messagesUrlOf(target)} \\`,
    `  -H "Authorization: Bearer ${keyOf(target)}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${json.replaceAll("'", "'\\''")}'`,
  ].join("\n");
}

function javascriptSampleOf(target: AppCallTarget): string {
  return [
    `const response = await fetch("${messagesUrlOf(target)}", {`,
    `  method: "POST",`,
    `  headers: {`,
    `    Authorization: "Bearer ${keyOf(target)}",`,
    `    "Content-Type": "application/json",`,
    `  },`,
    `  body: JSON.stringify(${indent(JSON.stringify(requestBodyOf(target), null, 2), 2)}),`,
    `});`,
    `if (!response.ok) throw new Error((await response.json()).message);`,
    `const { answer } = await response.json();`,
    `console.log(answer);`,
  ].join("\n");
}

function pythonSampleOf(target: AppCallTarget): string {
  const body = indent(pythonLiteralOf(requestBodyOf(target), 4), 4);
  return [
    `import requests`,
    ``,
    `response = requests.post(`,
    `    "${messagesUrlOf(target)}",`,
    `    headers={"Authorization": "Bearer ${keyOf(target)}"},`,
    `    json=${body},`,
    `    timeout=60,`,
    `)`,
    `response.raise_for_status()`,
    `print(response.json()["answer"])`,
  ].join("\n");
}

function difySampleOf(target: AppCallTarget): string {
  const baseUrl = `${trimSlash(target.origin)}/api/app/${target.slug}`;
  const inputs = JSON.stringify(inputsOf(target));
  if (target.mode === "chat") {
    return [
      `import { ChatClient } from "dify-client";`,
      ``,
      `const client = new ChatClient("${keyOf(target)}", "${baseUrl}");`,
      `const response = await client.createChatMessage(${inputs}, "${EXAMPLE_QUERY}", "${END_USER}", false, null);`,
      `console.log(response.data.answer, response.data.conversation_id);`,
    ].join("\n");
  }
  return [
    `import { CompletionClient } from "dify-client";`,
    ``,
    `const client = new CompletionClient("${keyOf(target)}", "${baseUrl}");`,
    `const response = await client.createCompletionMessage(${inputs}, "${END_USER}", false);`,
    `console.log(response.data.answer);`,
  ].join("\n");
}

function openAiSampleOf(target: AppCallTarget): string {
  const lines = [
    `import OpenAI from "openai";`,
    ``,
    `const client = new OpenAI({`,
    `  apiKey: "${keyOf(target)}",`,
    `  baseURL: "${trimSlash(target.origin)}/api/v1",`,
    `});`,
    `const completion = await client.chat.completions.create({`,
    `  model: "${target.slug}",`,
    `  messages: [{ role: "user", content: "${EXAMPLE_QUERY}" }],`,
  ];
  if (Object.keys(inputsOf(target)).length > 0)
    lines.push(
      `  // Promptmint extension: the app's declared inputs.`,
      `  inputs: ${JSON.stringify(inputsOf(target))},`,
    );
  lines.push(`  user: "${END_USER}",`, `});`, `console.log(completion.choices[0].message.content);`);
  return lines.join("\n");
}

/** The samples of the Explore app page, in the order its tabs show them. */
export function codeSamplesOf(target: AppCallTarget): CodeSample[] {
  return [
    { id: "curl", label: "curl", code: curlSampleOf(target) },
    { id: "javascript", label: "JavaScript", code: javascriptSampleOf(target) },
    { id: "python", label: "Python", code: pythonSampleOf(target) },
    { id: "dify", label: "Dify SDK", code: difySampleOf(target) },
    { id: "openai", label: "OpenAI SDK", code: openAiSampleOf(target) },
  ];
}
