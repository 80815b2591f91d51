import { describe, expect, it } from "vitest";
import { codeSamplesOf } from "./code-samples";

const completion = {
  origin: "https://mint.example/",
  slug: "haiku-writer",
  mode: "completion" as const,
  inputNames: ["topic", "lines"],
  takesQuery: false,
};

const codeOf = (target: Parameters<typeof codeSamplesOf>[0], id: string) =>
  codeSamplesOf(target).find((sample) => sample.id === id)?.code ?? "";

describe("code samples", () => {
  it("call the Dify-style endpoint with the key placeholder and every input", () => {
    for (const id of ["curl", "javascript", "python"]) {
      const code = codeOf(completion, id);
      expect(code).toContain("https://mint.example/api/app/haiku-writer/completion-messages");
      expect(code).toContain("Bearer YOUR_API_KEY");
      expect(code).toMatch(/"topic": "<topic>",\s+"lines": "<lines>"/);
      expect(code).not.toContain('"query"');
    }
    expect(codeOf(completion, "python")).toContain('print(response.json()["answer"])');
  });

  it("use the Dify SDK's completion or chat client with the app's base URL", () => {
    expect(codeOf(completion, "dify")).toContain(
      'new CompletionClient("YOUR_API_KEY", "https://mint.example/api/app/haiku-writer")',
    );
    expect(codeOf(completion, "dify")).toContain(
      'createCompletionMessage({"topic":"<topic>","lines":"<lines>"}, "customer-42", false)',
    );
    const chat = codeOf({ ...completion, mode: "chat", inputNames: [], takesQuery: true }, "dify");
    expect(chat).toContain("new ChatClient(");
    expect(chat).toContain('createChatMessage({}, "Hello!", "customer-42", false, null)');
  });

  it("send a chat's query and point the OpenAI SDK at /api/v1 with the slug as model", () => {
    const chat = { ...completion, mode: "chat" as const, takesQuery: true };
    expect(codeOf(chat, "curl")).toContain("/api/app/haiku-writer/chat-messages");
    expect(codeOf(chat, "curl")).toContain('"query": "Hello!"');
    const openai = codeOf(chat, "openai");
    expect(openai).toContain('baseURL: "https://mint.example/api/v1"');
    expect(openai).toContain('model: "haiku-writer"');
    expect(openai).toContain('inputs: {"topic":"<topic>","lines":"<lines>"}');
    expect(codeOf({ ...chat, inputNames: [] }, "openai")).not.toContain("inputs");
  });

  it("carry the given key and example inputs, as Python literals in Python", () => {
    const target = {
      ...completion,
      apiKey: "pm_live_secret",
      exampleInputs: { topic: "example topic", lines: 3, formal: false, note: null },
    };
    for (const id of ["curl", "javascript", "python", "dify", "openai"])
      expect(codeOf(target, id)).toContain("pm_live_secret");
    expect(codeOf(target, "curl")).not.toContain("YOUR_API_KEY");
    expect(codeOf(target, "curl")).toContain('"lines": 3');
    const python = codeOf(
      { ...target, exampleInputs: { ...target.exampleInputs, quote: "true story" } },
      "python",
    );
    expect(python).toContain('"formal": False');
    expect(python).toContain('"note": None');
    expect(python).toContain('"quote": "true story"');
  });

  it("escape single quotes in curl's body", () => {
    expect(codeOf({ ...completion, inputNames: ["it's"] }, "curl")).toContain(`"it'\\''s": "<it'\\''s>"`);
  });
});
