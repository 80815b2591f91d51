import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { createDifyWorld, type DifyWorld, PRICE_CENTS, sseEvents } from "../../test/dify-world.ts";

/** The Dify routes dify-client has no method for, called as their documentation shows. */
let world: DifyWorld;

beforeAll(async () => {
  world = await createDifyWorld();
});
afterAll(async () => {
  await world?.stop();
});

function call(slug: string, path: string, options: { method?: string; body?: unknown; key?: string } = {}) {
  return world.consumer.api(
    options.method ?? (options.body === undefined ? "GET" : "POST"),
    `/api/app/${slug}${path}`,
    {
      auth: options.key ?? world.consumerKey,
      body: options.body,
    },
  );
}

/** Starts a streamed call and answers its first event, with the rest of the stream to read. */
async function startStream(slug: string, path: string, body: object) {
  const response = await fetch(`${world.baseUrl(slug)}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.consumerKey}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, response_mode: "streaming" }),
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const first = sseEvents(text)[0] as Record<string, any>;
  return {
    first,
    /** Reads on until an event carries some of the answer. */
    async untilText() {
      while (!sseEvents(text).some((event) => event.answer)) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    },
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return sseEvents(text);
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe("stop", () => {
  it("stops a chat stream after some content: charged once, ended with message_end", async () => {
    world.vendor.set({
      kind: "reply",
      text: "one two three four five six seven eight nine ten",
      chunkDelayMs: 250,
    });
    try {
      const before = await world.walletCents();
      const stream = await startStream(world.slugs.chat, "/chat-messages", { query: "count", user: "sam" });
      // The first event is sent at once, before any text: it carries the task id to stop.
      expect(stream.first).toMatchObject({ event: "message", answer: "", task_id: expect.any(String) });
      await stream.untilText();
      const stopped = await call(world.slugs.chat, `/chat-messages/${stream.first.task_id}/stop`, {
        body: { user: "sam" },
      });
      expect(stopped).toMatchObject({ status: 200, body: { result: "success" } });
      const events = await stream.rest();
      const end = events.at(-1);
      expect(end).toMatchObject({
        event: "message_end",
        metadata: { usage: { charged_cents: PRICE_CENTS } },
      });
      const answer = events.filter((e) => e.event === "message").map((e) => e.answer);
      expect(answer.join("")).not.toContain("ten");
      expect(await world.walletCents()).toBe(before - PRICE_CENTS);
    } finally {
      world.vendor.set({ kind: "echo" });
    }
  });

  it("sends a chat stream's task_id at once on a slow model, and a stop before the answer costs nothing", async () => {
    // The model answers only once the test opens its gate: every event before that came without it.
    let open = () => {};
    world.vendor.set({ kind: "gated", open: new Promise<void>((resolve) => (open = resolve)) });
    try {
      const before = await world.walletCents();
      const stream = await startStream(world.slugs.chat, "/chat-messages", { query: "slow", user: "sam" });
      // Before the model's first word: the event a client needs to stop the call.
      expect(stream.first).toMatchObject({
        event: "message",
        answer: "",
        task_id: expect.any(String),
        message_id: stream.first.task_id,
        conversation_id: expect.any(String),
      });
      const stopped = await call(world.slugs.chat, `/chat-messages/${stream.first.task_id}/stop`, {
        body: { user: "sam" },
      });
      expect(stopped.body).toEqual({ result: "success" });
      // Ended with the model still waiting behind its gate: the stop ended it.
      const events = await stream.rest();
      expect(events.map((e) => e.answer ?? "").join("")).toBe("");
      // The model's request is cancelled too, not left running for an answer nobody reads.
      await expect.poll(() => world.vendor.requests.at(-1)?.cancelled, { timeout: 20_000 }).toBe(true);
      expect(events.at(-1)).toMatchObject({
        event: "message_end",
        metadata: { usage: { charged_cents: 0 } },
      });
      expect(await world.walletCents()).toBe(before);
      const [recorded] = await world.server.database.db
        .select()
        .from(invocations)
        .where(eq(invocations.id, stream.first.task_id));
      expect(recorded?.status).toBe("error");
    } finally {
      open();
      world.vendor.set({ kind: "echo" });
    }
  });

  it("stops a workflow run before any content: it costs nothing", async () => {
    world.providers.set("hang");
    try {
      const before = await world.walletCents();
      const stream = await startStream(world.slugs.workflow, "/workflows/run", { inputs: {}, user: "sam" });
      expect(stream.first.event).toBe("workflow_started");
      // Someone else's stop does not reach it.
      const foreign = await world.creator.api(
        "POST",
        `/api/app/${world.slugs.workflow}/workflows/tasks/${stream.first.task_id}/stop`,
        { auth: world.creatorKey, body: { user: "sam" } },
      );
      expect(foreign.status).toBe(200);
      const stopped = await call(world.slugs.workflow, `/workflows/tasks/${stream.first.task_id}/stop`, {
        body: { user: "sam" },
      });
      expect(stopped.body).toEqual({ result: "success" });
      const events = await stream.rest();
      expect(events.at(-1)).toMatchObject({
        event: "workflow_finished",
        data: { status: "stopped" },
        metadata: { usage: { charged_cents: 0 } },
      });
      expect(await world.walletCents()).toBe(before);
      const [run] = await world.server.database.db
        .select()
        .from(invocations)
        .where(eq(invocations.id, stream.first.task_id));
      expect(run?.status).toBe("error");
    } finally {
      world.providers.set("ok");
    }
  });
});

describe("app routes", () => {
  it("GET /meta answers Dify's tool_icons and GET /site the app's WebApp settings", async () => {
    expect((await call(world.slugs.chat, "/meta")).body).toEqual({ tool_icons: {} });
    const site = await call(world.slugs.chat, "/site");
    expect(site.body).toMatchObject({ title: "Dify chat", default_language: "en-US", icon: null });
  });

  it("GET /workflows/run/:id answers the caller's own run", async () => {
    const run = await call(world.slugs.workflow, "/workflows/run", {
      body: { inputs: { a: 1 }, user: "ann" },
    });
    const detail = await call(world.slugs.workflow, `/workflows/run/${run.body.workflow_run_id}`);
    expect(detail.body).toMatchObject({ id: run.body.workflow_run_id, status: "succeeded", outputs: null });
    const other = await world.creator.api(
      "GET",
      `/api/app/${world.slugs.workflow}/workflows/run/${run.body.workflow_run_id}`,
      { auth: world.creatorKey },
    );
    expect(other.status).toBe(404);
  });
});

describe("conversation routes", () => {
  it("GET /messages/:id/suggested answers 403 app_suggested_questions_after_answer_disabled", async () => {
    const sent = await call(world.slugs.chat, "/chat-messages", { body: { query: "hi", user: "sue" } });
    const suggested = await call(world.slugs.chat, `/messages/${sent.body.message_id}/suggested?user=sue`);
    expect(suggested.status).toBe(403);
    expect(suggested.body.code).toBe("app_suggested_questions_after_answer_disabled");
    const unknown = await call(
      world.slugs.chat,
      "/messages/00000000-0000-4000-8000-000000000000/suggested?user=sue",
    );
    expect(unknown.body).toMatchObject({ status: 404, message: "Message Not Exists." });
  });

  it("GET /conversations/:id/variables lists none, and 404 for a conversation not the caller's", async () => {
    const sent = await call(world.slugs.chat, "/chat-messages", { body: { query: "hi", user: "vic" } });
    const variables = await call(
      world.slugs.chat,
      `/conversations/${sent.body.conversation_id}/variables?user=vic`,
    );
    expect(variables.body).toEqual({ limit: 20, has_more: false, data: [] });
    const other = await call(
      world.slugs.chat,
      `/conversations/${sent.body.conversation_id}/variables?user=eve`,
    );
    expect(other.body).toMatchObject({ status: 404, message: "Conversation Not Exists." });
  });

  it("conversation routes of a completion app answer 400 not_chat_app", async () => {
    for (const path of ["/conversations?user=a", "/messages?user=a&conversation_id=x"]) {
      const refused = await call(world.slugs.completion, path);
      expect(refused.body, path).toMatchObject({ status: 400, code: "not_chat_app" });
    }
  });

  it("GET /conversations with an unknown last_id answers 404, and pinned=true lists none", async () => {
    await call(world.slugs.chat, "/chat-messages", { body: { query: "hi", user: "pat" } });
    const unknown = await call(
      world.slugs.chat,
      "/conversations?user=pat&last_id=00000000-0000-4000-8000-000000000000",
    );
    expect(unknown.body).toMatchObject({ status: 404, message: "Last Conversation Not Exists." });
    expect((await call(world.slugs.chat, "/conversations?user=pat&pinned=true")).body.data).toEqual([]);
    const oldestFirst = await call(world.slugs.chat, "/conversations?user=pat&sort_by=created_at");
    expect(oldestFirst.body.data).toHaveLength(1);
  });

  it("GET /app/feedbacks lists ratings to the app's creator only", async () => {
    const sent = await call(world.slugs.chat, "/chat-messages", { body: { query: "rate", user: "fay" } });
    await call(world.slugs.chat, `/messages/${sent.body.message_id}/feedbacks`, {
      body: { rating: "dislike", user: "fay", content: "too short" },
    });
    const own = await world.creator.api("GET", `/api/app/${world.slugs.chat}/app/feedbacks`, {
      auth: world.creatorKey,
    });
    expect(own.body.data).toContainEqual(
      expect.objectContaining({ message_id: sent.body.message_id, rating: "dislike", content: "too short" }),
    );
    expect((await call(world.slugs.chat, "/app/feedbacks")).status).toBe(403);
  });

  it("rates a chat turn whose invocation's day was dropped by the retention, as its message", async () => {
    const sent = await call(world.slugs.chat, "/chat-messages", { body: { query: "old", user: "gil" } });
    expect(sent.status).toBe(200);
    // What dropping the day's partition does to this call (decision 038): its raw row is gone.
    const db = world.server.database.db;
    await db.delete(invocations).where(eq(invocations.id, sent.body.message_id));
    const rated = await call(world.slugs.chat, `/messages/${sent.body.message_id}/feedbacks`, {
      body: { rating: "like", user: "gil" },
    });
    expect(rated.status).toBe(200);
    // Still only the caller's own message, for the Dify user who sent it.
    const stranger = await call(world.slugs.chat, `/messages/${sent.body.message_id}/feedbacks`, {
      body: { rating: "like", user: "someone-else" },
    });
    expect(stranger.status).toBe(404);
  });
});

describe("request fields", () => {
  it("accepts Dify's metadata fields and honours auto_generate_name: false", async () => {
    const sent = await call(world.slugs.chat, "/chat-messages", {
      body: {
        query: "unnamed",
        user: "max",
        retriever_from: "dev",
        trace_id: "t-1",
        auto_generate_name: false,
      },
    });
    expect(sent.status).toBe(200);
    const listed = await call(world.slugs.chat, "/conversations?user=max");
    expect(listed.body.data[0]).toMatchObject({ id: sent.body.conversation_id, name: "" });
  });

  it("refuses workflow_id and parent_message_id by name, charging nothing", async () => {
    const before = await world.walletCents();
    const refused = await call(world.slugs.chat, "/chat-messages", {
      body: { query: "hi", workflow_id: "wf-1", parent_message_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect(refused.body).toMatchObject({ status: 400, code: "invalid_param" });
    expect(Object.keys(refused.body.fields)).toEqual(["workflow_id", "parent_message_id"]);
    expect(await world.walletCents()).toBe(before);
  });
});

describe("file upload", () => {
  async function upload(form: FormData | string) {
    const response = await fetch(`${world.baseUrl(world.slugs.chat)}/files/upload`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${world.consumerKey}`,
        ...(typeof form === "string" ? { "content-type": "application/json" } : {}),
      },
      body: form,
    });
    return { status: response.status, body: await response.json() };
  }

  it("answers Dify's unsupported_file_type, no_file_uploaded and file_too_large codes", async () => {
    const exe = new FormData();
    exe.append("file", new Blob(["MZ"]), "tool.exe");
    expect(await upload(exe)).toMatchObject({ status: 415, body: { code: "unsupported_file_type" } });
    expect(await upload("{}")).toMatchObject({ status: 400, body: { code: "no_file_uploaded" } });
    const big = new FormData();
    big.append("file", new Blob([Buffer.alloc(16 * 1024 * 1024, 0x61)]), "big.txt");
    expect(await upload(big)).toMatchObject({ status: 413, body: { code: "file_too_large" } });
  });
});
