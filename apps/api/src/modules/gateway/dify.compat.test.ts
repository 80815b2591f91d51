import type { Readable } from "node:stream";
import { isAxiosError } from "axios";
import { ChatClient, CompletionClient, DifyClient } from "dify-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDifyWorld, type DifyWorld, PRICE_CENTS, sseEvents } from "../../test/dify-world.ts";

/**
 * What dify-client 2.3.2 really does (index.js) where its type declarations fall short: they
 * lack runWorkflow and auto_generate, and type ratings as numbers and files as DOM Files.
 */
interface DifyClientAsItRuns {
  runWorkflow(inputs: object, user: string, stream?: boolean): Promise<any>;
  messageFeedback(messageId: string, rating: "like" | "dislike" | null, user: string): Promise<any>;
  renameConversation(
    id: string,
    name: string | undefined,
    user: string,
    autoGenerate?: boolean,
  ): Promise<any>;
  createCompletionMessage(
    inputs: object,
    user: string,
    stream?: boolean,
    files?: object[] | null,
  ): Promise<any>;
}

let world: DifyWorld;
let completion: CompletionClient & DifyClientAsItRuns;
let chat: ChatClient & DifyClientAsItRuns;
let workflow: CompletionClient & DifyClientAsItRuns;

beforeAll(async () => {
  world = await createDifyWorld();
  completion = asItRuns(new CompletionClient(world.consumerKey, world.baseUrl(world.slugs.completion)));
  chat = asItRuns(new ChatClient(world.consumerKey, world.baseUrl(world.slugs.chat)));
  workflow = asItRuns(new CompletionClient(world.consumerKey, world.baseUrl(world.slugs.workflow)));
});
afterAll(async () => {
  await world?.stop();
});

const asItRuns = <T extends DifyClient>(client: T) => client as T & DifyClientAsItRuns;

/** A streamed axios response read to its end. */
async function readStream(stream: Readable): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** The Dify error a refused call answered with. */
async function refusal(call: Promise<unknown>): Promise<Record<string, any>> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isAxiosError(error) || !error.response) throw new Error(`expected a refusal, got ${error}`);
  return { status: error.response.status, ...(error.response.data as Record<string, any>) };
}

/** Every page of a paged list, until `has_more` is false (at most 50 pages, so a loop that would not end fails). */
async function allPages<T extends Record<string, any>>(
  page: (cursor: string | null) => Promise<{ data: T[]; has_more: boolean }>,
  nextCursor: (data: T[]) => string | undefined,
): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const { data, has_more } = await page(cursor);
    pages.push(data);
    if (!has_more) return pages;
    cursor = nextCursor(data) ?? null;
  }
  throw new Error("the paging loop did not end");
}

describe("dify-client", () => {
  it("CompletionClient.createCompletionMessage blocking → works", async () => {
    const before = await world.walletCents();
    const { data } = await completion.createCompletionMessage({ topic: "tea" }, "alice");
    expect(data).toMatchObject({ event: "message", mode: "completion", answer: "echo: About tea" });
    expect(data.metadata.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
    expect(await world.walletCents()).toBe(before - PRICE_CENTS);
  });

  it("CompletionClient.createCompletionMessage streaming → works", async () => {
    const before = await world.walletCents();
    const { data } = await completion.createCompletionMessage({ topic: "rain" }, "alice", true);
    const events = sseEvents(await readStream(data));
    const answer = events
      .filter((e) => e.event === "message")
      .map((e) => e.answer)
      .join("");
    expect(answer).toBe("echo: About rain");
    expect(events.at(-1)).toMatchObject({
      event: "message_end",
      metadata: { usage: { charged_cents: PRICE_CENTS } },
    });
    expect(await world.walletCents()).toBe(before - PRICE_CENTS);
  });

  it("CompletionClient.createCompletionMessage undeclared and omitted optional inputs → works", async () => {
    // Dify reads only the form's variables: `extra` is left out, the optional `tone` is empty.
    const { data } = await completion.createCompletionMessage({ topic: "snow", extra: "ignored" }, "alice");
    expect(data.answer).toBe("echo: About snow");
  });

  it("CompletionClient.createCompletionMessage without a required input → refused 400 invalid_param", async () => {
    const before = await world.walletCents();
    const refused = await refusal(completion.createCompletionMessage({ tone: "calm" }, "alice"));
    expect(refused).toMatchObject({
      status: 400,
      code: "invalid_param",
      fields: { "inputs.topic": "is required" },
    });
    expect(await world.walletCents()).toBe(before);
  });

  it("CompletionClient.createCompletionMessage on a chat app → works", async () => {
    // SPEC §2 calls every prompt app through completion-messages: a chat app answers one turn.
    const onChat = asItRuns(new CompletionClient(world.consumerKey, world.baseUrl(world.slugs.chat)));
    const { data } = await onChat.createCompletionMessage({ query: "One turn" }, "alice");
    expect(data).toMatchObject({ mode: "completion", answer: "echo: One turn" });
    expect(data.conversation_id).toBeUndefined();
  });

  it("CompletionClient.runWorkflow blocking → works", async () => {
    const before = await world.walletCents();
    const { data } = await workflow.runWorkflow({ city: "Oslo" }, "alice");
    expect(data.workflow_run_id).toBe(data.task_id);
    expect(data.data).toMatchObject({
      id: data.workflow_run_id,
      status: "succeeded",
      outputs: { answer: 'hook got {"city":"Oslo"}' },
      error: null,
      total_steps: 1,
    });
    expect(typeof data.data.elapsed_time).toBe("number");
    expect(data.data.finished_at).toBeGreaterThanOrEqual(data.data.created_at);
    expect(await world.walletCents()).toBe(before - PRICE_CENTS);
  });

  it("CompletionClient.runWorkflow streaming → works", async () => {
    const before = await world.walletCents();
    const { data } = await workflow.runWorkflow({ city: "Rome" }, "alice", true);
    const events = sseEvents(await readStream(data));
    expect(events.map((e) => e.event)).toEqual(["workflow_started", "text_chunk", "workflow_finished"]);
    expect(events[1]?.data.text).toBe('hook got {"city":"Rome"}');
    expect(events[2]).toMatchObject({
      workflow_run_id: events[0]?.workflow_run_id,
      data: { status: "succeeded", outputs: { answer: 'hook got {"city":"Rome"}' } },
    });
    expect(await world.walletCents()).toBe(before - PRICE_CENTS);
  });

  it("CompletionClient.runWorkflow on a prompt app → refused 400 not_workflow_app", async () => {
    const refused = await refusal(completion.runWorkflow({ topic: "x" }, "alice"));
    expect(refused).toMatchObject({ status: 400, code: "not_workflow_app" });
  });

  it("ChatClient.createChatMessage blocking → works", async () => {
    const before = await world.walletCents();
    const first = (await chat.createChatMessage({}, "Hello", "bob")).data;
    expect(first.answer).toBe("echo: Hello");
    const second = (await chat.createChatMessage({}, "Again", "bob", false, first.conversation_id)).data;
    expect(second.conversation_id).toBe(first.conversation_id);
    expect(await world.walletCents()).toBe(before - 2 * PRICE_CENTS);
  });

  it("ChatClient.createChatMessage streaming → works", async () => {
    const { data } = await chat.createChatMessage({}, "Stream me", "bob", true);
    const events = sseEvents(await readStream(data));
    expect(
      events
        .filter((e) => e.event === "message")
        .map((e) => e.answer)
        .join(""),
    ).toBe("echo: Stream me");
    expect(events.at(-1)?.event).toBe("message_end");
    expect(events.at(-1)?.conversation_id).toBeTruthy();
  });

  it("ChatClient.createChatMessage streaming on a slow model, stopped by its task_id → works", async () => {
    // The model answers only once the test opens its gate: every event before that came without it.
    let open = () => {};
    world.vendor.set({ kind: "gated", open: new Promise<void>((resolve) => (open = resolve)) });
    try {
      const before = await world.walletCents();
      const { data } = await chat.createChatMessage({}, "Slow", "carol", true);
      const chunks = (data as Readable)[Symbol.asyncIterator]();
      let text = "";
      while (!text.includes("\n\n")) text += String((await chunks.next()).value);
      // The first event comes before the model's answer: what a stop needs.
      const first = sseEvents(text)[0];
      expect(first).toMatchObject({
        event: "message",
        answer: "",
        task_id: expect.any(String),
        conversation_id: expect.any(String),
      });
      // dify-client has no stop method: the call Dify's documentation shows.
      const stopped = await world.consumer.api(
        "POST",
        `/api/app/${world.slugs.chat}/chat-messages/${first?.task_id}/stop`,
        { auth: world.consumerKey, body: { user: "carol" } },
      );
      expect(stopped.body).toEqual({ result: "success" });
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) text += String(next.value);
      expect(sseEvents(text).at(-1)).toMatchObject({
        event: "message_end",
        metadata: { usage: { charged_cents: 0 } },
      });
      // The stream ended with the model still waiting behind its gate: the stop ended it.
      expect(await world.walletCents()).toBe(before);
    } finally {
      open();
      world.vendor.set({ kind: "echo" });
    }
  });

  it("ChatClient.createChatMessage on a completion app → refused 400 not_chat_app", async () => {
    const onCompletion = new ChatClient(world.consumerKey, world.baseUrl(world.slugs.completion));
    const before = await world.walletCents();
    const refused = await refusal(onCompletion.createChatMessage({ topic: "x" }, "Hi", "bob"));
    expect(refused).toMatchObject({ status: 400, code: "not_chat_app" });
    expect(await world.walletCents()).toBe(before);
  });

  it("ChatClient.createChatMessage in an unknown conversation → refused 404 not_found", async () => {
    const refused = await refusal(
      chat.createChatMessage({}, "Hi", "bob", false, "00000000-0000-4000-8000-000000000000"),
    );
    expect(refused).toMatchObject({ status: 404, code: "not_found", message: "Conversation Not Exists." });
  });

  it("ChatClient.getConversationMessages → works", async () => {
    const started = (await chat.createChatMessage({}, "m0", "carol")).data;
    for (const query of ["m1", "m2", "m3", "m4"])
      await chat.createChatMessage({}, query, "carol", false, started.conversation_id);
    const pages = await allPages(
      async (firstId) =>
        (await chat.getConversationMessages("carol", started.conversation_id, firstId, 2)).data,
      (data) => data[0]?.id,
    );
    // Newest first page, each page oldest first; paging back by first_id until has_more is false.
    expect(pages.map((page) => page.map((m) => m.query))).toEqual([["m3", "m4"], ["m1", "m2"], ["m0"]]);
    const message = pages[0]?.[0];
    expect(message).toMatchObject({
      conversation_id: started.conversation_id,
      answer: "echo: m3",
      parent_message_id: null,
      message_files: [],
      feedback: null,
      retriever_resources: [],
      agent_thoughts: [],
      status: "normal",
      error: null,
    });
  });

  it("ChatClient.getConversations → works", async () => {
    for (const query of ["c1", "c2", "c3"]) await chat.createChatMessage({}, query, "dave");
    // dify-client sends its cursor as first_id; Dify's service API names it last_id.
    const pages = await allPages(
      async (lastId) => (await chat.getConversations("dave", lastId, 2)).data,
      (data) => data.at(-1)?.id,
    );
    expect(pages.map((page) => page.map((c) => c.name))).toEqual([["c3", "c2"], ["c1"]]);
    expect(pages[0]?.[0]).toMatchObject({ inputs: {}, status: "normal", introduction: "" });
  });

  it("ChatClient.renameConversation → works", async () => {
    const { conversation_id } = (await chat.createChatMessage({}, "Plan a trip to Lisbon", "erin")).data;
    const renamed = (await chat.renameConversation(conversation_id, "Lisbon", "erin")).data;
    expect(renamed).toMatchObject({ id: conversation_id, name: "Lisbon" });
    const generated = (await chat.renameConversation(conversation_id, undefined, "erin", true)).data;
    expect(generated.name).toBe("Plan a trip to Lisbon");
    const listed = (await chat.getConversations("erin")).data.data;
    expect(listed.map((c: { name: string }) => c.name)).toEqual(["Plan a trip to Lisbon"]);
  });

  it("ChatClient.deleteConversation → works", async () => {
    const { conversation_id } = (await chat.createChatMessage({}, "Forget me", "frank")).data;
    const deleted = await chat.deleteConversation(conversation_id, "frank");
    expect(deleted.status).toBe(204);
    expect((await chat.getConversations("frank")).data.data).toEqual([]);
    const gone = await refusal(chat.getConversationMessages("frank", conversation_id));
    expect(gone).toMatchObject({ status: 404, message: "Conversation Not Exists." });
  });

  it("DifyClient.messageFeedback → works", async () => {
    const sent = (await chat.createChatMessage({}, "Rate me", "gina")).data;
    expect((await chat.messageFeedback(sent.message_id, "like", "gina")).data).toEqual({ result: "success" });
    const rated = (await chat.getConversationMessages("gina", sent.conversation_id)).data.data;
    expect(rated[0].feedback).toEqual({ rating: "like" });
    await chat.messageFeedback(sent.message_id, null, "gina");
    const unrated = (await chat.getConversationMessages("gina", sent.conversation_id)).data.data;
    expect(unrated[0].feedback).toBeNull();
    // Another end user's message is not theirs to rate.
    const refused = await refusal(chat.messageFeedback(sent.message_id, "dislike", "someone-else"));
    expect(refused).toMatchObject({ status: 404, message: "Message Not Exists." });
  });

  it("DifyClient.getApplicationParameters → works", async () => {
    const { data } = await new DifyClient(
      world.consumerKey,
      world.baseUrl(world.slugs.completion),
    ).getApplicationParameters("alice");
    for (const key of [
      "suggested_questions_after_answer",
      "speech_to_text",
      "text_to_speech",
      "retriever_resource",
      "annotation_reply",
      "more_like_this",
      "sensitive_word_avoidance",
    ])
      expect(data[key], key).toMatchObject({ enabled: false });
    expect(data.file_upload).toMatchObject({ enabled: false, image: { enabled: false } });
    expect(data.user_input_form).toEqual([
      { "text-input": { label: "Topic", variable: "topic", required: true, default: "", max_length: 40 } },
      { paragraph: { label: "tone", variable: "tone", required: false, default: "", max_length: 0 } },
      { checkbox: { label: "short", variable: "short", required: false, default: true } },
    ]);
    expect(data.system_parameters.file_size_limit).toBeGreaterThan(0);
  });

  it("DifyClient.fileUpload → works", async () => {
    const form = new FormData();
    form.append("user", "alice");
    form.append("file", new Blob([PNG], { type: "image/png" }), "dot.png");
    const { status, data } = await new DifyClient(
      world.consumerKey,
      world.baseUrl(world.slugs.completion),
    ).fileUpload(form);
    expect(status).toBe(201);
    expect(data).toMatchObject({
      name: "dot.png",
      size: PNG.length,
      extension: "png",
      mime_type: "image/png",
    });
    expect(typeof data.created_at).toBe("number");
    uploadedFileId = data.id;
  });

  it("CompletionClient.createCompletionMessage with an uploaded file → refused 400 files", async () => {
    expect(uploadedFileId).toBeTruthy();
    const before = await world.walletCents();
    const refused = await refusal(
      completion.createCompletionMessage({ topic: "a picture" }, "alice", false, [
        { type: "image", transfer_method: "local_file", upload_file_id: uploadedFileId },
      ]),
    );
    expect(refused).toMatchObject({ status: 400, code: "invalid_param" });
    expect(Object.keys(refused.fields)).toEqual(["files"]);
    expect(await world.walletCents()).toBe(before);
  });
});

let uploadedFileId = "";
/** The PNG signature and a few bytes: enough for the upload's type check. */
const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
]);
