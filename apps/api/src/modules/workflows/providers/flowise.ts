import { AppError, invalidFields } from "../../../lib/errors.ts";
import {
  type ConfigValues,
  ensureOk,
  type ProviderContext,
  readJson,
  str,
  upstreamFacts,
  type WorkflowCall,
  type WorkflowProviderAdapter,
} from "./provider.ts";

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

/**
 * How a flow reads its input. Chatflows take `question` and `overrideConfig.vars`. Agentflows (V2)
 * start at a Start node whose input type is a chat `question` or a `form` object, never both
 * (buildAgentflow throws "Question and form cannot be provided at the same time").
 */
type FlowShape = { kind: "chatflow" } | { kind: "agentflow"; startInputType: string; formFields: string[] };

interface FlowNode {
  data?: {
    name?: string;
    inputs?: { startInputType?: unknown; formInputTypes?: { name?: unknown }[] };
  };
}

/**
 * The flow's shape from its public chatbot config, which Flowise serves without the flow's API key
 * (the embed widget reads it), credentials stripped. A flow without a Start node is a chatflow;
 * an answer without flowData (older Flowise) is taken as one too.
 */
async function readFlowShape(context: ProviderContext): Promise<FlowShape> {
  const id = chatflowId(context.config);
  const response = await context.fetch(`${base(context.config)}/api/v1/public-chatbotConfig/${id}`, {
    headers: headers(context.config),
    timeoutMs: context.timeoutMs,
  });
  await ensureOk(response, "Flowise");
  const config = await readJson<{ flowData?: unknown } | string>(response, "Flowise");
  const flowData = typeof config === "object" && config ? config.flowData : undefined;
  if (typeof flowData !== "string") return { kind: "chatflow" };
  let nodes: FlowNode[] = [];
  try {
    nodes = (JSON.parse(flowData) as { nodes?: FlowNode[] }).nodes ?? [];
  } catch {
    throw new AppError("upstream_failed", "Flowise answered with a flow that is not JSON");
  }
  const start = nodes.find((node) => node.data?.name === "startAgentflow");
  if (!start) return { kind: "chatflow" };
  const inputs = start.data?.inputs ?? {};
  return {
    kind: "agentflow",
    startInputType: typeof inputs.startInputType === "string" ? inputs.startInputType : "chatInput",
    formFields: (inputs.formInputTypes ?? [])
      .map((field) => field.name)
      .filter((name): name is string => typeof name === "string"),
  };
}

const flowShapes = upstreamFacts<FlowShape>();
/**
 * The shape a call goes by. When Flowise cannot say (an older one without the public config), the
 * flow is taken as a chatflow and the prediction itself reports anything wrong.
 */
const flowShape = async (context: ProviderContext): Promise<FlowShape> =>
  (await flowShapes([base(context.config), chatflowId(context.config)], () =>
    readFlowShape(context).catch(() => undefined),
  )) ?? { kind: "chatflow" };

/**
 * A form-input agentflow's `form`: the inputs, and the query under `query` when the caller sent one.
 * Fields the form does not declare would be ignored by the flow, so they are refused by name.
 */
function formOf(call: WorkflowCall, formFields: string[]): Record<string, unknown> {
  const form =
    call.query && call.inputs.query === undefined ? { ...call.inputs, query: call.query } : call.inputs;
  if (formFields.length === 0) return form;
  const declared = formFields.join(", ");
  const unknown = Object.keys(form).filter((key) => !formFields.includes(key));
  if (unknown.length > 0)
    throw invalidFields(
      Object.fromEntries(
        unknown.map((key) => [
          key === "query" && call.inputs.query === undefined ? "query" : `inputs.${key}`,
          `is not a field of this Flowise agentflow's form (its fields: ${declared})`,
        ]),
      ),
    );
  return form;
}

function predictionBody(shape: FlowShape, call: WorkflowCall) {
  const sessionId = call.providerConversationId ?? call.conversationId;
  const overrideConfig = { vars: call.inputs, ...(sessionId ? { sessionId } : {}) };
  if (shape.kind === "agentflow" && shape.startInputType === "formInput")
    return { form: formOf(call, shape.formFields), overrideConfig, streaming: false };
  const question =
    call.query ?? (typeof call.inputs.query === "string" ? call.inputs.query : JSON.stringify(call.inputs));
  return { question, overrideConfig, streaming: false };
}

/**
 * The key is optional (a chatflow without one is open). When one is set, Flowise is asked whether it
 * knows it: GET /api/v1/verify/apikey/{key}, the check its own UI uses. Whether the key is the one
 * this flow requires shows only on the first call.
 */
async function verifyApiKey(context: ProviderContext): Promise<boolean> {
  const key = str(context.config, "api_key");
  if (!key) return false;
  const response = await context.fetch(
    `${base(context.config)}/api/v1/verify/apikey/${encodeURIComponent(key)}`,
    { timeoutMs: context.timeoutMs },
  );
  if (response.status === 401)
    throw invalidFields({ "provider_config.api_key": "is not an API key this Flowise server knows" });
  await ensureOk(response, "Flowise");
  return true;
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
      chatflow_id: {
        title: "Chatflow ID",
        description: "The id of the chatflow or agentflow to run",
        type: "string",
      },
      api_key: {
        title: "API Key",
        description: "The flow's API key, if it has one",
        type: "string",
        secret: true,
      },
    },
    required: ["base_url", "chatflow_id"],
  },

  async invoke(context, call) {
    const body = predictionBody(await flowShape(context), call);
    const response = await context.fetch(
      `${base(context.config)}/api/v1/prediction/${chatflowId(context.config)}`,
      {
        method: "POST",
        headers: headers(context.config),
        body: JSON.stringify(body),
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
      providerConversationId: prediction.sessionId ?? body.overrideConfig.sessionId,
    };
  },

  async test(context) {
    const shape = await readFlowShape(context);
    const keyChecked = await verifyApiKey(context);
    const id = chatflowId(context.config);
    return {
      message: `Connected to Flowise ${shape.kind} '${id}'`,
      appInfo: {
        id,
        type: shape.kind === "agentflow" ? "AGENTFLOW" : "CHATFLOW",
        start_input: shape.kind === "agentflow" ? shape.startInputType : "question",
        form_fields: shape.kind === "agentflow" ? shape.formFields.join(", ") : "",
        api_key: keyChecked ? "known to Flowise" : "none (the flow must be open)",
      },
    };
  },
};
