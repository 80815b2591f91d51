import { AppError } from "../../../lib/errors.ts";
import {
  type ConfigValues,
  ensureOk,
  readJson,
  readSseJson,
  str,
  toWorkflowStream,
  type WorkflowAnswer,
  type WorkflowCall,
  type WorkflowProviderAdapter,
} from "./provider.ts";

export const DIFY_CLOUD_URL = "https://api.dify.ai/v1";

interface DifyMessage {
  answer?: string;
  conversation_id?: string;
  metadata?: { usage?: { prompt_tokens?: number; completion_tokens?: number } };
}
interface DifyWorkflowRun {
  data?: { outputs?: Record<string, unknown>; status?: string; error?: string | null; total_tokens?: number };
}

const base = (config: ConfigValues) => (str(config, "base_url") || DIFY_CLOUD_URL).replace(/\/+$/, "");
const headers = (config: ConfigValues) => ({
  authorization: `Bearer ${str(config, "api_key")}`,
  "content-type": "application/json",
});
const appType = (config: ConfigValues) =>
  (str(config, "app_type") || "chat") as "chat" | "completion" | "workflow";

/** Dify's inputs for completion and workflow apps have no query: it travels as inputs.query. */
function requestFor(call: WorkflowCall, config: ConfigValues, responseMode: "blocking" | "streaming") {
  const type = appType(config);
  if (type === "chat") {
    if (!call.query)
      throw new AppError("bad_request", "This workflow is a Dify chat app: send a query", {
        fields: { query: "is required" },
      });
    return {
      path: "/chat-messages",
      body: {
        inputs: call.inputs,
        query: call.query,
        user: call.user,
        response_mode: responseMode,
        ...(call.providerConversationId ? { conversation_id: call.providerConversationId } : {}),
      },
    };
  }
  const inputs =
    call.query !== undefined && call.inputs.query === undefined
      ? { ...call.inputs, query: call.query }
      : call.inputs;
  return {
    path: type === "workflow" ? "/workflows/run" : "/completion-messages",
    body: { inputs, user: call.user, response_mode: responseMode },
  };
}

function workflowAnswer(run: DifyWorkflowRun): WorkflowAnswer {
  const data = run.data ?? {};
  if (data.status && data.status !== "succeeded")
    throw new AppError(
      "upstream_failed",
      `Dify workflow ${data.status}${data.error ? `: ${data.error}` : ""}`,
    );
  const outputs = data.outputs ?? {};
  const preferred = ["answer", "text", "result", "output"]
    .map((key) => outputs[key])
    .find((value) => typeof value === "string");
  return {
    answer: (preferred as string | undefined) ?? JSON.stringify(outputs),
    inputTokens: 0,
    outputTokens: data.total_tokens ?? 0,
  };
}

export const difyProvider: WorkflowProviderAdapter = {
  slug: "dify",
  name: "Dify",
  description: "A Dify app (chat, completion or workflow) called through Dify's service API.",
  supportsStreaming: true,
  configSchema: {
    type: "object",
    properties: {
      base_url: {
        title: "API Base URL",
        description: "Dify's service API root; Dify Cloud unless you self-host",
        type: "string",
        default: DIFY_CLOUD_URL,
        format: "uri",
      },
      api_key: {
        title: "App API Key",
        description: "The app's API key from Dify (API Access)",
        type: "string",
        secret: true,
      },
      app_type: {
        title: "App Type",
        description: "The kind of Dify app",
        type: "string",
        enum: ["chat", "completion", "workflow"],
        default: "chat",
      },
      app_id: { title: "App ID", description: "Dify's app id, for your reference", type: "string" },
    },
    required: ["base_url", "api_key", "app_type"],
  },

  async invoke(context, call) {
    const { path, body } = requestFor(call, context.config, "blocking");
    const response = await context.fetch(`${base(context.config)}${path}`, {
      method: "POST",
      headers: headers(context.config),
      body: JSON.stringify(body),
      timeoutMs: context.timeoutMs,
    });
    await ensureOk(response, "Dify");
    if (path === "/workflows/run") return workflowAnswer(await readJson<DifyWorkflowRun>(response, "Dify"));
    const message = await readJson<DifyMessage>(response, "Dify");
    if (typeof message.answer !== "string")
      throw new AppError("upstream_failed", "Dify's answer had no 'answer' field");
    return {
      answer: message.answer,
      inputTokens: message.metadata?.usage?.prompt_tokens ?? 0,
      outputTokens: message.metadata?.usage?.completion_tokens ?? 0,
      providerConversationId: message.conversation_id,
    };
  },

  stream(context, call) {
    return toWorkflowStream(async function* () {
      const { path, body } = requestFor(call, context.config, "streaming");
      const response = await context.fetch(`${base(context.config)}${path}`, {
        method: "POST",
        headers: headers(context.config),
        body: JSON.stringify(body),
        timeoutMs: context.timeoutMs,
      });
      await ensureOk(response, "Dify");
      let answer = "";
      let result: WorkflowAnswer | undefined;
      let conversationId: string | undefined;
      for await (const event of readSseJson(response.chunks())) {
        if (typeof event.conversation_id === "string") conversationId = event.conversation_id;
        switch (event.event) {
          case "message":
          case "agent_message":
            if (typeof event.answer === "string") {
              answer += event.answer;
              yield event.answer;
            }
            break;
          case "text_chunk": {
            const text = (event.data as { text?: string } | undefined)?.text;
            if (text) {
              answer += text;
              yield text;
            }
            break;
          }
          case "message_end": {
            const usage = (event.metadata as DifyMessage["metadata"])?.usage;
            result = {
              answer,
              inputTokens: usage?.prompt_tokens ?? 0,
              outputTokens: usage?.completion_tokens ?? 0,
              providerConversationId: conversationId,
            };
            break;
          }
          case "workflow_finished": {
            const finished = workflowAnswer({ data: event.data as DifyWorkflowRun["data"] });
            if (!answer) yield finished.answer;
            result = { ...finished, answer: answer || finished.answer };
            break;
          }
          case "error":
            throw new AppError(
              "upstream_failed",
              `Dify reported an error: ${String(event.message ?? "unknown error")}`,
            );
        }
      }
      if (!result)
        throw new AppError("upstream_failed", "Dify's stream ended before the answer was complete");
      return result;
    });
  },

  async test(context) {
    const info = await context.fetch(`${base(context.config)}/info`, {
      headers: headers(context.config),
      timeoutMs: context.timeoutMs,
    });
    await ensureOk(info, "Dify");
    const appInfo = await readJson<Record<string, unknown>>(info, "Dify");
    const parameters = await context.fetch(`${base(context.config)}/parameters?user=promptmint-test`, {
      headers: headers(context.config),
      timeoutMs: context.timeoutMs,
    });
    await ensureOk(parameters, "Dify");
    const form =
      (await readJson<{ user_input_form?: Record<string, { variable?: string }>[] }>(parameters, "Dify"))
        .user_input_form ?? [];
    const variables = form.flatMap((entry) =>
      Object.values(entry)
        .map((field) => field.variable)
        .filter(Boolean),
    );
    return {
      message: `Connected to Dify app '${String(appInfo.name ?? "unnamed")}'`,
      appInfo: {
        name: appInfo.name ?? null,
        description: appInfo.description ?? null,
        mode: appInfo.mode ?? null,
        input_variables: variables.join(", "),
      },
    };
  },
};
