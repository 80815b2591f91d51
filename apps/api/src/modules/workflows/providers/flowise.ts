import { AppError } from "../../../lib/errors.ts";
import { type ConfigValues, ensureOk, readJson, str, type WorkflowProviderAdapter } from "./provider.ts";

const base = (config: ConfigValues) => str(config, "base_url").replace(/\/+$/, "");
function headers(config: ConfigValues): Record<string, string> {
  const key = str(config, "api_key");
  return { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
}
function chatflowId(config: ConfigValues): string {
  const id = str(config, "chatflow_id");
  if (!/^[A-Za-z0-9-]+$/.test(id))
    throw new AppError("bad_request", "The Flowise chatflow id may contain only letters, digits and hyphens");
  return id;
}

interface FlowisePrediction {
  text?: string;
  json?: unknown;
  sessionId?: string;
}

export const flowiseProvider: WorkflowProviderAdapter = {
  slug: "flowise",
  name: "Flowise",
  description: "A Flowise chatflow or agentflow called through its Prediction API.",
  supportsStreaming: false,
  configSchema: {
    type: "object",
    properties: {
      base_url: {
        title: "Flowise URL",
        description: "Your Flowise server, e.g. https://flowise.example.com",
        type: "string",
        format: "uri",
      },
      chatflow_id: { title: "Chatflow ID", description: "The id of the chatflow to run", type: "string" },
      api_key: {
        title: "API Key",
        description: "The chatflow's API key, if it has one",
        type: "string",
        secret: true,
      },
    },
    required: ["base_url", "chatflow_id"],
  },

  async invoke(context, call) {
    const question =
      call.query ?? (typeof call.inputs.query === "string" ? call.inputs.query : JSON.stringify(call.inputs));
    const sessionId = call.providerConversationId ?? call.conversationId;
    const response = await context.fetch(
      `${base(context.config)}/api/v1/prediction/${chatflowId(context.config)}`,
      {
        method: "POST",
        headers: headers(context.config),
        body: JSON.stringify({
          question,
          overrideConfig: { vars: call.inputs, ...(sessionId ? { sessionId } : {}) },
          streaming: false,
        }),
        timeoutMs: context.timeoutMs,
      },
    );
    await ensureOk(response, "Flowise");
    const prediction = await readJson<FlowisePrediction>(response, "Flowise");
    const answer =
      typeof prediction.text === "string" ? prediction.text : JSON.stringify(prediction.json ?? prediction);
    return {
      answer,
      inputTokens: 0,
      outputTokens: 0,
      providerConversationId: prediction.sessionId ?? sessionId,
    };
  },

  async test(context) {
    const response = await context.fetch(
      `${base(context.config)}/api/v1/chatflows/${chatflowId(context.config)}`,
      {
        headers: headers(context.config),
        timeoutMs: context.timeoutMs,
      },
    );
    await ensureOk(response, "Flowise");
    const flow = await readJson<{ id?: string; name?: string; deployed?: boolean; type?: string }>(
      response,
      "Flowise",
    );
    return {
      message: `Connected to Flowise chatflow '${flow.name ?? chatflowId(context.config)}'`,
      appInfo: {
        id: flow.id ?? null,
        name: flow.name ?? null,
        type: flow.type ?? null,
        deployed: flow.deployed ?? null,
      },
    };
  },
};
