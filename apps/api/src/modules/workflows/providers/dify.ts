import { AppError, invalidFields } from "../../../lib/errors.ts";
import {
  type ConfigValues,
  collect,
  ensureOk,
  type ProviderContext,
  readJson,
  readSseJson,
  str,
  toWorkflowStream,
  upstreamFacts,
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
interface DifyAppInfo {
  name?: string;
  description?: string;
  mode?: string;
}

type AppType = "chat" | "completion" | "workflow";

/**
 * Dify's app modes (`mode` in GET /info) and the service API each one answers on: chat-like apps on
 * /chat-messages, completion apps on /completion-messages, workflow apps on /workflows/run. Any other
 * route answers 400 (`not_chat_app`, `not_completion_app`, `not_workflow_app`).
 */
const APP_TYPE_OF_MODE: Record<string, AppType> = {
  chat: "chat",
  "agent-chat": "chat",
  "advanced-chat": "chat",
  completion: "completion",
  workflow: "workflow",
};

const base = (config: ConfigValues) => (str(config, "base_url") || DIFY_CLOUD_URL).replace(/\/+$/, "");
const headers = (config: ConfigValues) => ({
  authorization: `Bearer ${str(config, "api_key")}`,
  "content-type": "application/json",
});
const configuredType = (config: ConfigValues) => (str(config, "app_type") || "chat") as AppType;

async function readAppInfo(context: ProviderContext): Promise<DifyAppInfo> {
  const response = await context.fetch(`${base(context.config)}/info`, {
    headers: headers(context.config),
    timeoutMs: context.timeoutMs,
  });
  await ensureOk(response, "Dify");
  return readJson<DifyAppInfo>(response, "Dify");
}

const appInfoCache = upstreamFacts<DifyAppInfo>();

/**
 * The app's real mode, so a call goes to the route Dify serves it on even when the configured
 * `app_type` is wrong. A Dify too old to report its mode (or not answering /info) is taken at its
 * configured `app_type`; the call itself then reports what went wrong.
 */
async function appMode(context: ProviderContext): Promise<string> {
  const info = await appInfoCache([base(context.config), str(context.config, "api_key")], () =>
    readAppInfo(context).catch(() => undefined),
  );
  return info?.mode && APP_TYPE_OF_MODE[info.mode] ? info.mode : configuredType(context.config);
}

/** Dify's inputs for completion and workflow apps have no query: it travels as inputs.query. */
function requestFor(call: WorkflowCall, mode: string, responseMode: "blocking" | "streaming") {
  const type = APP_TYPE_OF_MODE[mode] ?? "chat";
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

/** The call, on the route of the app's mode; a Dify error answer becomes a 502 with its message. */
async function send(
  context: ProviderContext,
  call: WorkflowCall,
  mode: string,
  responseMode: "blocking" | "streaming",
) {
  const { path, body } = requestFor(call, mode, responseMode);
  const response = await context.fetch(`${base(context.config)}${path}`, {
    method: "POST",
    headers: headers(context.config),
    body: JSON.stringify(body),
    timeoutMs: context.timeoutMs,
  });
  await ensureOk(response, "Dify");
  return { path, response };
}

/** Dify's server-sent events, yielded as answer text; returns the whole answer with its usage. */
async function* streamAnswer(
  context: ProviderContext,
  call: WorkflowCall,
  mode: string,
): AsyncGenerator<string, WorkflowAnswer> {
  const { response } = await send(context, call, mode, "streaming");
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
  if (!result) throw new AppError("upstream_failed", "Dify's stream ended before the answer was complete");
  return result;
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
        description: "The kind of Dify app; Test Config checks it against what the app says it is",
        type: "string",
        enum: ["chat", "completion", "workflow"],
        default: "chat",
      },
      app_id: { title: "App ID", description: "Dify's app id, for your reference", type: "string" },
    },
    required: ["base_url", "api_key", "app_type"],
  },

  async invoke(context, call) {
    const mode = await appMode(context);
    // Dify's agent apps answer only in streaming mode ("blocking mode is not supported").
    if (mode === "agent-chat") return collect(toWorkflowStream(() => streamAnswer(context, call, mode)));
    const { path, response } = await send(context, call, mode, "blocking");
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
      return yield* streamAnswer(context, call, await appMode(context));
    });
  },

  async test(context) {
    const info = await readAppInfo(context);
    checkAppType(context.config, info.mode);
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
      message: `Connected to Dify app '${String(info.name ?? "unnamed")}'`,
      appInfo: {
        name: info.name ?? null,
        description: info.description ?? null,
        mode: info.mode ?? null,
        input_variables: variables.join(", "),
      },
    };
  },
};

/**
 * Test Config refuses an `app_type` that is not what the app says it is (400 naming the field), so a
 * wrong setting is caught when it is made, not by every call failing. A Dify whose /info has no
 * `mode` (older releases) cannot be checked.
 */
function checkAppType(config: ConfigValues, mode: string | undefined): void {
  if (!mode) return;
  const real = APP_TYPE_OF_MODE[mode];
  if (!real)
    throw invalidFields({
      "provider_config.app_type": `cannot be served: this Dify app's mode is '${mode}', which has no chat, completion or workflow API`,
    });
  if (real !== configuredType(config))
    throw invalidFields({
      "provider_config.app_type": `is '${configuredType(config)}' but this Dify app is a '${mode}' app: choose '${real}'`,
    });
}
