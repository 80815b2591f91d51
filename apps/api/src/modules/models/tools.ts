import { type generateText, jsonSchema, type ModelMessage, type ToolSet, tool } from "ai";

type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]["providerOptions"]>;

/**
 * Tools a caller passes through a prompt app to its model (docs/decisions/053): function
 * definitions, the model's calls of them and the caller's results, in the vendor-neutral shapes
 * the model layer speaks, and their conversion to the AI SDK's (which maps them to each vendor:
 * OpenAI's `tools`/`tool_calls`, Anthropic's `tool_use`/`tool_result`, Google's and Mistral's).
 */

/** A function the caller's code runs: its name, what it does, its arguments' JSON Schema. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/** Whether the model may, must, or must not call a tool, or which one it must call. */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** One call of a tool by the model: its id, the function's name, its arguments as JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A piece of a streamed tool call: the first names it (id, name), the rest carry argument text. */
export interface ToolCallDelta {
  /** The call's place among this answer's tool calls, from 0. */
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

/** What a streamed answer yields: text, or a piece of a tool call. */
export type StreamPiece = string | { toolCall: ToolCallDelta };

/** The tool settings of one model request. */
export interface ToolSettings {
  tools: ToolDefinition[];
  choice?: ToolChoice;
  /** False: at most one tool call per answer. Undefined: the vendor's default (parallel allowed). */
  parallel?: boolean;
}

/** The model's conversation: the caller's turns, tool calls (assistant) and tool results included. */
export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A tool call's arguments as the AI SDK takes them: the parsed JSON, or the text when it is not JSON. */
function inputOf(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText);
  } catch {
    return argumentsText;
  }
}

/** The conversation as the AI SDK's messages; a tool result names its tool from the call it answers. */
export function modelMessagesOf(messages: ChatMessage[]): ModelMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((message): ModelMessage => {
    if (message.role === "user") return message;
    if (message.role === "tool")
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: toolNames.get(message.toolCallId) ?? "unknown",
            output: { type: "text", value: message.content },
          },
        ],
      };
    if (!message.toolCalls?.length) return { role: "assistant", content: message.content };
    for (const call of message.toolCalls) toolNames.set(call.id, call.name);
    return {
      role: "assistant",
      content: [
        ...(message.content ? [{ type: "text" as const, text: message.content }] : []),
        ...message.toolCalls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.id,
          toolName: call.name,
          input: inputOf(call.arguments),
        })),
      ],
    };
  });
}

/**
 * The AI SDK's settings for the caller's tools: each a tool without `execute`, so the SDK stops
 * after the model's answer and hands its calls back (the caller runs them); the choice; and
 * whether parallel calls are allowed, in each vendor's own option.
 */
export function aiSdkToolSettings(settings: ToolSettings | undefined): {
  tools?: ToolSet;
  toolChoice?: "auto" | "none" | "required" | { type: "tool"; toolName: string };
  providerOptions?: ProviderOptions;
} {
  if (!settings || settings.tools.length === 0) return {};
  const tools: ToolSet = Object.fromEntries(
    settings.tools.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.parameters as never),
        strict: definition.strict,
      }),
    ]),
  );
  const choice = settings.choice;
  const parallel = settings.parallel;
  return {
    tools,
    toolChoice: typeof choice === "object" ? { type: "tool", toolName: choice.name } : choice,
    providerOptions:
      parallel === undefined
        ? undefined
        : {
            openai: { parallelToolCalls: parallel },
            // An OpenAI-compatible server (OPENAI_BASE_URL) takes the field as OpenAI spells it.
            openaiCompatible: { parallel_tool_calls: parallel },
            anthropic: { disableParallelToolUse: !parallel },
            mistral: { parallelToolCalls: parallel },
          },
  };
}

/** An AI SDK tool call (a step's or a stream's) as a ToolCall: arguments as JSON text. */
export function toolCallOf(call: { toolCallId: string; toolName: string; input: unknown }): ToolCall {
  return {
    id: call.toolCallId,
    name: call.toolName,
    arguments: typeof call.input === "string" ? call.input : JSON.stringify(call.input ?? {}),
  };
}
