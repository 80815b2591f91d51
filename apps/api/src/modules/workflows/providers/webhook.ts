import { AppError } from "../../../lib/errors.ts";
import {
  type ConfigValues,
  type ProviderContext,
  postJson,
  readJson,
  str,
  type WorkflowCall,
  type WorkflowProviderAdapter,
} from "./provider.ts";

/**
 * Any HTTP endpoint that takes our documented JSON contract:
 *   request  POST {mode, query, inputs, user, conversation_id, max_iterations}
 *   response 200  {answer: string, conversation_id?: string, usage?: {input_tokens, output_tokens}}
 */
interface WebhookAnswer {
  answer?: unknown;
  conversation_id?: string;
  usage?: { input_tokens?: number; output_tokens?: number };
}

function headers(config: ConfigValues): Record<string, string> {
  const token = str(config, "bearer_token");
  return { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
}
const payload = (call: WorkflowCall) => ({
  mode: call.mode,
  query: call.query ?? null,
  inputs: call.inputs,
  user: call.user,
  conversation_id: call.providerConversationId ?? null,
  max_iterations: call.maxIterations,
});

function parse(body: WebhookAnswer): {
  answer: string;
  inputTokens: number;
  outputTokens: number;
  providerConversationId?: string;
} {
  if (typeof body.answer !== "string")
    throw new AppError("upstream_failed", "The webhook's answer must be JSON with a string 'answer' field");
  const tokens = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0);
  return {
    answer: body.answer,
    inputTokens: tokens(body.usage?.input_tokens),
    outputTokens: tokens(body.usage?.output_tokens),
    providerConversationId: typeof body.conversation_id === "string" ? body.conversation_id : undefined,
  };
}

/** POSTs `body` to the configured endpoint, with its bearer token when one is set. */
const postToEndpoint = (context: ProviderContext, body: unknown) =>
  postJson(context, str(context.config, "url"), headers(context.config), body, "The webhook");

export const webhookProvider: WorkflowProviderAdapter = {
  slug: "webhook",
  name: "Webhook",
  description:
    "Any HTTPS endpoint that takes Promptmint's JSON contract: {mode, query, inputs, user, conversation_id} in, {answer, usage?} out.",
  supportsStreaming: false,
  configSchema: {
    type: "object",
    properties: {
      url: {
        title: "Endpoint URL",
        description: "Where Promptmint POSTs each call",
        type: "string",
        format: "uri",
      },
      bearer_token: {
        title: "Bearer Token",
        description: "Sent as Authorization: Bearer … (optional)",
        type: "string",
        secret: true,
      },
    },
    required: ["url"],
  },

  async invoke(context, call) {
    const response = await postToEndpoint(context, payload(call));
    return parse(await readJson<WebhookAnswer>(response, "The webhook"));
  },

  async test(context) {
    const ping = payload({
      mode: "completion",
      inputs: {},
      query: "ping",
      user: "promptmint-test",
      maxIterations: 1,
    });
    const response = await postToEndpoint(context, { ...ping, test: true });
    const answer = parse(await readJson<WebhookAnswer>(response, "The webhook"));
    return {
      message: "The webhook answered in the expected format",
      appInfo: { answer_preview: answer.answer.slice(0, 120) },
    };
  },
};
