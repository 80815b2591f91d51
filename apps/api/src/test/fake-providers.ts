import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ProviderRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * One loopback server speaking the real protocols of Dify's service API, an n8n webhook, Flowise's
 * prediction API and our webhook contract. Tests switch its behaviour to errors or hangs.
 */
export async function startFakeProviders() {
  const requests: ProviderRequest[] = [];
  let behaviour: "ok" | "error400" | "hang" = "ok";
  const sockets = new Set<import("node:net").Socket>();
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
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };

      // Dify service API
      if (url.pathname.startsWith("/dify/v1/")) {
        if (req.headers.authorization !== "Bearer app-dify-key-9999")
          return json(401, { code: "unauthorized", message: "Access token is invalid", status: 401 });
        const path = url.pathname.slice("/dify/v1".length);
        if (path === "/info")
          return json(200, {
            name: "Support Bot",
            description: "Answers questions",
            tags: [],
            mode: "advanced-chat",
          });
        if (path === "/parameters")
          return json(200, {
            user_input_form: [{ "text-input": { label: "Topic", variable: "topic", required: false } }],
          });
        if (path === "/chat-messages") {
          const conversationId = body.conversation_id || `dify-conv-${++conversationCounter}`;
          const answer = `dify answers: ${body.query}`;
          if (body.response_mode === "streaming") {
            res.writeHead(200, { "content-type": "text/event-stream" });
            for (const word of answer.match(/\S+\s*/g) ?? [])
              res.write(
                `data: ${JSON.stringify({ event: "message", answer: word, conversation_id: conversationId })}\n\n`,
              );
            res.write("event: ping\n\n");
            res.end(
              `data: ${JSON.stringify({ event: "message_end", conversation_id: conversationId, metadata: { usage: { prompt_tokens: 12, completion_tokens: 3 } } })}\n\n`,
            );
            return;
          }
          return json(200, {
            answer,
            conversation_id: conversationId,
            metadata: { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
          });
        }
        if (path === "/workflows/run")
          return json(200, {
            data: {
              status: "succeeded",
              outputs: { text: `workflow ran on ${body.inputs.query}` },
              total_tokens: 8,
            },
          });
        return json(404, { code: "not_found", message: "not found", status: 404 });
      }
      // n8n webhook ("Respond to Webhook" with the first item)
      if (url.pathname === "/n8n/webhook/abc") {
        if (req.headers["x-n8n-auth"] !== "s3cret-header")
          return json(403, { message: "Authorization data is wrong!" });
        return json(200, [{ output: `n8n says: ${body.chatInput} (session ${body.sessionId})` }]);
      }
      // Flowise prediction API
      if (url.pathname === "/flowise/api/v1/prediction/flow-1") {
        return json(200, {
          text: `flowise says: ${body.question}`,
          sessionId: body.overrideConfig?.sessionId ?? "flowise-session-1",
          chatId: "c1",
        });
      }
      if (url.pathname === "/flowise/api/v1/chatflows/flow-1")
        return json(200, { id: "flow-1", name: "FAQ flow", deployed: true, type: "CHATFLOW" });
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
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set(next: typeof behaviour) {
      behaviour = next;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
