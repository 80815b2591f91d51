import { z } from "zod";
import { invalidFields } from "../../lib/errors.ts";
import type { ToolChoice, ToolDefinition, ToolSettings } from "../models/tools.ts";

/**
 * The tool parts of an OpenAI-style request (docs/decisions/053): their schemas in both APIs, the
 * caller's tool settings checked, and the refusal of tools by an app whose creator did not allow
 * them. The conversation's tool turns are read with the other turns (openai-request.ts).
 */

/** A function's name, as OpenAI bounds it. */
const FunctionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -");
const ONLY_FUNCTIONS = "must be function: only function tools can be passed to the app's model";
/** What a function tool declares besides its name, in both APIs. */
const FunctionFields = {
  description: z.string().max(10_000).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
};
const MAX_TOOLS = 128;
export const ToolCallIdSchema = z.string().min(1).max(200);

/** Chat Completions' `tools`: function tools only. */
export const ChatToolsSchema = z
  .array(
    z.strictObject({
      type: z.literal("function", ONLY_FUNCTIONS),
      function: z.strictObject({ name: FunctionName, ...FunctionFields }),
    }),
  )
  .max(MAX_TOOLS);
export const ChatToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.strictObject({ type: z.literal("function"), function: z.strictObject({ name: FunctionName }) }),
]);
/** An assistant message's `tool_calls`, as an earlier answer carried them. */
export const ChatToolCallsSchema = z
  .array(
    z.strictObject({
      id: ToolCallIdSchema,
      type: z.literal("function", "must be function: only function tool calls are supported"),
      function: z.strictObject({ name: FunctionName, arguments: z.string().max(1_000_000) }),
    }),
  )
  .max(MAX_TOOLS);

/** The Responses API's `tools`: function tools only (others run on OpenAI's servers). */
export const ResponsesToolsSchema = z
  .array(
    z.strictObject({ type: z.literal("function", ONLY_FUNCTIONS), name: FunctionName, ...FunctionFields }),
  )
  .max(MAX_TOOLS);
export const ResponsesToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.strictObject({ type: z.literal("function"), name: FunctionName }),
]);

/** A Responses `function_call` input item: a tool call the model made in an earlier answer. */
export const FunctionCallItem = z.strictObject({
  type: z.literal("function_call"),
  call_id: ToolCallIdSchema,
  name: FunctionName,
  arguments: z.string().max(1_000_000),
  id: z.string().max(200).nullish(),
  status: z.enum(["in_progress", "completed", "incomplete"]).nullish(),
});
/** A Responses `function_call_output` input item: the caller's result of that call. */
export const FunctionCallOutputItem = z.strictObject({
  type: z.literal("function_call_output"),
  call_id: ToolCallIdSchema,
  output: z.union([
    z.string(),
    z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()).max(100),
  ]),
  id: z.string().max(200).nullish(),
  status: z.enum(["in_progress", "completed", "incomplete"]).nullish(),
});

/** An input item checked against its schema; a problem is a 400 naming the item's field. */
export function parseItem<T>(schema: z.ZodType<T>, item: unknown, at: string): T {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.length ? `${at}.${issue.path.join(".")}` : at;
  throw invalidFields({ [path]: issue?.message ?? "is not valid" });
}

/**
 * The caller's tool settings, and the first field that uses tools (refused by name when the app
 * does not allow them). A choice that requires a tool needs tools, and a named one a declared tool.
 */
export function toolSettingsOf(
  tools: ToolDefinition[],
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
  toolsParam: (i: number) => string,
): ToolSettings | undefined {
  tools.forEach((tool, i) => {
    if (tools.findIndex((other) => other.name === tool.name) !== i)
      throw invalidFields({ [toolsParam(i)]: `declares '${tool.name}' a second time` });
  });
  if (tools.length === 0) {
    if (choice === "required" || typeof choice === "object")
      throw invalidFields({ tool_choice: "needs tools: send the functions the model may call in tools" });
    return undefined;
  }
  if (typeof choice === "object" && !tools.some((tool) => tool.name === choice.name))
    throw invalidFields({ tool_choice: `names '${choice.name}', which is not one of the tools` });
  return { tools, choice, parallel };
}

/** A function tool's definition, its parameters an empty object's schema when it declares none. */
export function definitionOf(tool: {
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description ?? undefined,
    parameters: tool.parameters ?? { type: "object", properties: {} },
    strict: tool.strict ?? undefined,
  };
}

/**
 * Tools reach the model only when the app's creator allowed them (`allow_tools`, decision 053):
 * otherwise the first field that uses them is refused by name.
 */
export function refuseTools(
  call: { toolsParam?: string; toolsProblem?: Record<string, string> },
  allowed: boolean,
): void {
  if (!call.toolsParam) return;
  if (allowed) {
    if (call.toolsProblem) throw invalidFields(call.toolsProblem);
    return;
  }
  throw invalidFields({
    [call.toolsParam]:
      "cannot be used with this app: its creator has not enabled tools (allow_tools), so it answers with text only",
  });
}
