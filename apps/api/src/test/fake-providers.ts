import http from "node:http";
import { listenOnLoopback } from "./loopback.ts";

export interface ProviderRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * Dify apps by API key, each with the mode its GET /info reports. Like Dify, an app answers only on
 * the route of its mode and refuses the others with 400 `not_chat_app` / `not_completion_app` /
 * `not_workflow_app`; agent apps refuse blocking mode.
 */
export const FAKE_DIFY_APPS = {
  "app-dify-key-9999": { name: "Support Bot", mode: "advanced-chat" },
  "app-dify-workflow-1234": { name: "Report Flow", mode: "workflow" },
  "app-dify-completion-5678": { name: "Writer", mode: "completion" },
  "app-dify-agent-4321": { name: "Agent", mode: "agent-chat" },
} as const;
type DifyMode = (typeof FAKE_DIFY_APPS)[keyof typeof FAKE_DIFY_APPS]["mode"];

const DIFY_ROUTE_MODES: Record<string, { modes: DifyMode[]; code: string }> = {
  "/chat-messages": { modes: ["advanced-chat", "agent-chat"], code: "not_chat_app" },
  "/completion-messages": { modes: ["completion"], code: "not_completion_app" },
  "/workflows/run": { modes: ["workflow"], code: "not_workflow_app" },
};

/**
 * Flowise flows by id, as Flowise 3 stores them: a chatflow behind an API key, an open chatflow, and
 * agentflows (V2) whose Start node takes a chat question or a form.
 */
const FLOWISE_FLOWS: Record<string, { type: "CHATFLOW" | "AGENTFLOW"; apiKey?: string; start?: object }> = {
  "flow-1": { type: "CHATFLOW", apiKey: "fw-key-1234" },
  "flow-open": { type: "CHATFLOW" },
  "agent-form": {
    type: "AGENTFLOW",
    start: {
      startInputType: "formInput",
      formInputTypes: [
        { type: "string", label: "Topic", name: "topic" },
        { type: "string", label: "Language", name: "lang" },
      ],
    },
  },
  "agent-chat": { type: "AGENTFLOW", start: { startInputType: "chatInput" } },
};
const FLOWISE_KEYS = ["fw-key-1234"];

/** n8n: the production webhook paths of active workflows (test URLs are not listening). */
const N8N_ACTIVE_WEBHOOKS: Record<string, string[]> = { abc: ["POST"] };

/**
 * One loopback server speaking the real protocols of Dify's service API, n8n's webhooks, Flowise's
 * prediction API and our webhook contract, as strictly as the real engines. Tests switch its
 * behaviour to errors or hangs; `executions` counts the workflows it actually ran.
 */
export async function startFakeProviders() {
  const requests: ProviderRequest[] = [];
  const executions: { provider: "n8n" | "flowise" | "dify"; path: string }[] = [];
  let behaviour: "ok" | "error400" | "rate429" | "hang" = "ok";
  let conversationCounter = 0;

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const body = raw ? JSON.parse(raw) : undefined;
      requests.push({ method: req.method ?? "GET", path: url.pathname, headers: req.headers, body });
      if (behaviour === "hang") return;
      if (behaviour === "rate429") {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "3" });
        res.end(JSON.stringify({ code: "rate_limit_error", message: "Rate Limit Error", status: 429 }));
        return;
      }
      if (behaviour === "error400") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            code: "invalid_param",
            message: "inputs.topic is required in input form",
            status: 400,
          }),
        );
        return;
      }
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(value));
      };

      // Dify service API
      if (url.pathname.startsWith("/dify/v1/")) {
        const key = (req.headers.authorization ?? "").replace(/^Bearer /, "");
        const app = FAKE_DIFY_APPS[key as keyof typeof FAKE_DIFY_APPS];
        if (!app) return json(401, { code: "unauthorized", message: "Access token is invalid", status: 401 });
        const path = url.pathname.slice("/dify/v1".length);
        if (path === "/info")
          return json(200, {
            name: app.name,
            description: "Answers questions",
            tags: [],
            mode: app.mode,
            author_name: "Creator",
          });
        if (path === "/parameters")
          return json(200, {
            user_input_form: [{ "text-input": { label: "Topic", variable: "topic", required: false } }],
          });
        const route = DIFY_ROUTE_MODES[path];
        if (!route) return json(404, { code: "not_found", message: "not found", status: 404 });
        if (!route.modes.includes(app.mode))
          return json(400, {
            code: route.code,
            message: "Please check if your app mode matches the right API route.",
            status: 400,
          });
        if (app.mode === "agent-chat" && body.response_mode !== "streaming")
          return json(400, {
            code: "invalid_param",
            message: "Agent Chat App does not support blocking mode",
            status: 400,
          });
        executions.push({ provider: "dify", path });
        if (path === "/workflows/run")
          return json(200, {
            workflow_run_id: "run-1",
            data: {
              status: "succeeded",
              outputs: { text: `workflow ran on ${body.inputs.query}` },
              total_tokens: 8,
            },
          });
        const conversationId = body.conversation_id || `dify-conv-${++conversationCounter}`;
        const answer = `dify answers: ${body.query ?? body.inputs.query}`;
        if (body.response_mode === "streaming") {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const event = app.mode === "agent-chat" ? "agent_message" : "message";
          for (const word of answer.match(/\S+\s*/g) ?? [])
            res.write(
              `data: ${JSON.stringify({ event, answer: word, conversation_id: conversationId })}\n\n`,
            );
          res.write("event: ping\n\n");
          res.end(
            `data: ${JSON.stringify({ event: "message_end", conversation_id: conversationId, metadata: { usage: { prompt_tokens: 12, completion_tokens: 3 } } })}\n\n`,
          );
          return;
        }
        return json(200, {
          answer,
          conversation_id: path === "/chat-messages" ? conversationId : undefined,
          metadata: { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
        });
      }

      // n8n: /webhook/<path> runs an active workflow; /webhook-test/<path> only while the editor
      // listens (never, here). A preflight with an Origin answers the registered methods without
      // running anything (n8n's WebhookRequestHandler.setupCorsHeaders).
      const n8n = url.pathname.match(/^\/n8n\/(webhook|webhook-test)\/(.+)$/);
      if (n8n) {
        const [, kind, path = ""] = n8n;
        const methods = kind === "webhook" ? N8N_ACTIVE_WEBHOOKS[path] : undefined;
        const notRegistered = () =>
          json(404, {
            code: 404,
            message: `The requested webhook "${req.method === "OPTIONS" ? "" : `${req.method} `}${path}" is not registered.`,
            hint:
              kind === "webhook"
                ? "The workflow must be active for a production URL to run successfully."
                : "Click the 'Execute workflow' button on the canvas, then try again.",
          });
        if (req.method === "OPTIONS") {
          if (!req.headers.origin) return json(204, {});
          // An unregistered production path: findAccessControlOptions throws outside n8n's own error
          // handling, so Express answers 500 (HTML) after the methods header was set (n8n 1.123).
          if (!methods && kind === "webhook") {
            res.writeHead(500, { "access-control-allow-methods": "OPTIONS", "content-type": "text/html" });
            return res.end("<!DOCTYPE html><pre>Internal Server Error</pre>");
          }
          if (!methods) return notRegistered();
          res.writeHead(204, {
            "access-control-allow-methods": ["OPTIONS", ...methods].join(", "),
            "access-control-allow-origin": req.headers.origin,
          });
          return res.end();
        }
        if (!methods?.includes(req.method ?? "")) return notRegistered();
        if (req.headers["x-n8n-auth"] !== "s3cret-header")
          return json(403, { message: "Authorization data is wrong!" });
        executions.push({ provider: "n8n", path });
        return json(200, [{ output: `n8n says: ${body.chatInput} (session ${body.sessionId})` }]);
      }

      // Flowise 3 API
      const flowise = url.pathname.match(/^\/flowise\/api\/v1\/([a-zA-Z-]+)\/([^/]+)$/);
      if (flowise) {
        const [, route, id = ""] = flowise;
        const flow = FLOWISE_FLOWS[id];
        const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
        if (route === "chatflows")
          // Behind Flowise's authentication: a session or an API key with chatflows:view.
          return FLOWISE_KEYS.includes(bearer)
            ? json(200, { id, name: "FAQ flow", type: flow?.type })
            : json(401, { message: "Unauthorized Access" });
        if (!flow) return json(404, { statusCode: 404, success: false, message: `Chatflow ${id} not found` });
        if (route === "public-chatbotConfig") {
          const nodes = flow.start
            ? [{ id: "startAgentflow_0", data: { name: "startAgentflow", inputs: flow.start } }]
            : [{ id: "chatOpenAI_0", data: { name: "chatOpenAI", inputs: { modelName: "gpt-4o" } } }];
          return json(200, {
            uploads: { isImageUploadAllowed: false },
            flowData: JSON.stringify({ nodes, edges: [] }),
          });
        }
        if (route === "prediction") return flowisePrediction(flow, bearer, body, json);
        return json(404, { message: "no such route" });
      }
      const verify = url.pathname.match(/^\/flowise\/api\/v1\/verify\/apikey\/(.+)$/);
      if (verify)
        return FLOWISE_KEYS.includes(decodeURIComponent(verify[1] ?? ""))
          ? json(200, "OK")
          : json(401, { statusCode: 401, success: false, message: "Unauthorized" });

      // Our webhook contract
      if (url.pathname === "/hook") {
        return json(200, {
          answer: `hook got ${body.query ?? JSON.stringify(body.inputs)}`,
          usage: { input_tokens: 4, output_tokens: 6 },
        });
      }
      return json(404, { message: "no such route" });
    });
  });

  /** Flowise's buildChatflow: the flow's key when it has one; agentflows read question or form. */
  function flowisePrediction(
    flow: (typeof FLOWISE_FLOWS)[string],
    bearer: string,
    body: any,
    json: (status: number, value: unknown) => void,
  ) {
    if (flow.apiKey && bearer !== flow.apiKey) return json(401, { message: "Unauthorized" });
    const sessionId = body.overrideConfig?.sessionId ?? "flowise-session-1";
    if (flow.type === "CHATFLOW") {
      executions.push({ provider: "flowise", path: "prediction" });
      return json(200, { text: `flowise says: ${body.question}`, sessionId, chatId: sessionId });
    }
    if (body.question && body.form && Object.keys(body.form).length > 0)
      return json(500, { message: "Question and form cannot be provided at the same time" });
    executions.push({ provider: "flowise", path: "prediction" });
    const start = flow.start as { startInputType: string };
    // $form.<name> resolves from `form` only; overrideConfig.vars never reaches a form field.
    const text =
      start.startInputType === "formInput"
        ? `agentflow form: ${Object.entries(body.form ?? {})
            .map(([key, value]) => `${key}=${value}`)
            .join(", ")}`
        : `agentflow says: ${body.question}`;
    return json(200, { text, question: body.question, form: body.form, sessionId, executionId: "exec-1" });
  }

  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    executions,
    set(next: typeof behaviour) {
      behaviour = next;
    },
    stop: close,
  };
}
