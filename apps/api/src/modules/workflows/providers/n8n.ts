import { AppError, invalidFields } from "../../../lib/errors.ts";
import type { SafeResponse } from "../../../lib/safe-fetch.ts";
import {
  type ConfigValues,
  ensureOk,
  postJson,
  str,
  type WorkflowCall,
  type WorkflowProviderAdapter,
} from "./provider.ts";

function headers(config: ConfigValues): Record<string, string> {
  const result: Record<string, string> = { "content-type": "application/json" };
  const name = str(config, "header_name");
  if (name) {
    if (!/^[A-Za-z0-9-]+$/.test(name))
      throw new AppError("bad_request", "The n8n header name may contain only letters, digits and hyphens");
    result[name.toLowerCase()] = str(config, "header_value");
  }
  return result;
}

/**
 * The production webhook URL. n8n's test URL (/webhook-test/…) answers only while the editor is
 * listening for a test event, and then once, so calls through it would fail: Test Config refuses it.
 */
function webhookUrl(config: ConfigValues): string {
  const url = str(config, "webhook_url");
  if (/\/webhook-test\//.test(new URL(url).pathname))
    throw invalidFields({
      "provider_config.webhook_url":
        "is n8n's test URL (/webhook-test/), which answers only while the editor listens for a test event: use the production URL (/webhook/) of the active workflow",
    });
  return url;
}

/** What our call sends to the webhook; n8n's Chat Trigger and AI Agent read chatInput and sessionId. */
const payload = (call: WorkflowCall) => ({
  mode: call.mode,
  query: call.query ?? "",
  chatInput: call.query ?? "",
  inputs: call.inputs,
  user: call.user,
  sessionId: call.conversationId ?? call.user,
  max_iterations: call.maxIterations,
});

/** "Respond to Webhook" answers vary: an item, a list of items, or text. Take the likely answer field. */
export function answerFromN8n(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const item = Array.isArray(parsed) ? parsed[0] : parsed;
  if (item && typeof item === "object") {
    const record =
      (item as { json?: unknown }).json && typeof (item as { json?: unknown }).json === "object"
        ? ((item as { json: object }).json as Record<string, unknown>)
        : (item as Record<string, unknown>);
    for (const key of ["output", "answer", "text", "response", "message"]) {
      if (typeof record[key] === "string") return record[key] as string;
    }
  }
  return typeof parsed === "string" ? parsed : JSON.stringify(parsed);
}

export const n8nProvider: WorkflowProviderAdapter = {
  slug: "n8n",
  name: "n8n",
  description:
    "An n8n workflow started by its Webhook (or Chat Trigger) node; it answers with Respond to Webhook.",
  supportsStreaming: false,
  configSchema: {
    type: "object",
    properties: {
      webhook_url: {
        title: "Webhook URL",
        description: "The production URL of the workflow's Webhook node",
        type: "string",
        format: "uri",
      },
      header_name: {
        title: "Auth Header Name",
        description: "Header auth: the header's name (optional)",
        type: "string",
      },
      header_value: {
        title: "Auth Header Value",
        description: "Header auth: the header's value (optional)",
        type: "string",
        secret: true,
      },
    },
    required: ["webhook_url"],
  },

  async invoke(context, call) {
    const response = await postJson(
      context,
      str(context.config, "webhook_url"),
      headers(context.config),
      payload(call),
      "n8n",
    );
    return {
      answer: answerFromN8n(await response.text()),
      inputTokens: 0,
      outputTokens: 0,
      providerConversationId: call.conversationId,
    };
  },

  async test(context) {
    const response = await context.fetch(webhookUrl(context.config), {
      method: "OPTIONS",
      headers: { origin: "null", "access-control-request-method": "POST" },
      timeoutMs: context.timeoutMs,
    });
    const methods = allowedMethods(response);
    if (response.status < 300 && methods?.includes("POST"))
      return {
        message: "The n8n webhook is active and takes POST (checked without running the workflow)",
        appInfo: {
          methods: methods.join(", "),
          header_auth: str(context.config, "header_name")
            ? "not checked: n8n checks it only when the workflow runs"
            : "none",
        },
      };
    if (methods && methods.length > 0)
      throw new AppError(
        "upstream_failed",
        `The n8n webhook at this URL takes ${methods.join(", ")}, not POST: set its HTTP Method to POST`,
      );
    if (methods || response.status === 404)
      throw new AppError(
        "upstream_failed",
        `n8n has no active webhook at this URL (HTTP ${response.status}). n8n serves a production URL only while its workflow is active: activate it and check the path`,
      );
    await ensureOk(response, "n8n");
    throw new AppError(
      "upstream_failed",
      "This URL did not answer like an n8n webhook (its preflight answer lists no methods)",
    );
  },
};

/**
 * The methods n8n's preflight answer allows, OPTIONS left out; null when it names none. n8n 1.123
 * answers a preflight for an active webhook 204 `OPTIONS, POST`; for a production path no active
 * workflow registers, 500 with `OPTIONS` alone; for a test URL nobody listens on, 404.
 */
function allowedMethods(response: SafeResponse): string[] | null {
  const allowed = response.headers.get("access-control-allow-methods");
  if (allowed === null) return null;
  return allowed
    .split(",")
    .map((method) => method.trim().toUpperCase())
    .filter((method) => method && method !== "OPTIONS");
}
