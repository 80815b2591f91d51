// Request and response examples for the API docs (/api/docs), one per paid endpoint.

const usage = {
  prompt_tokens: 18,
  prompt_unit_price: "0",
  prompt_price_unit: "0.000001",
  prompt_price: "0.0000000",
  completion_tokens: 42,
  completion_unit_price: "0",
  completion_price_unit: "0.000001",
  completion_price: "0.0000000",
  total_tokens: 60,
  total_price: "0.0500000",
  currency: "USD" as const,
  latency: 1.284,
  input_tokens: 18,
  output_tokens: 42,
  charged_cents: 5,
  paid_by: "wallet" as const,
};

export const completionRequestExample = {
  inputs: { topic: "autumn rain" },
  response_mode: "blocking",
  user: "customer-42",
};

export const chatRequestExample = {
  inputs: {},
  query: "What can you help me with?",
  response_mode: "blocking",
  user: "customer-42",
  conversation_id: null,
};

const messageId = "5ad4cb98-f0c7-4085-b384-88c403be6290";
const conversationId = "45701982-8118-4bc5-8e9b-64562b4555f2";

export function gatewayResponseExample(mode: "completion" | "chat") {
  return {
    event: "message",
    id: messageId,
    message_id: messageId,
    task_id: messageId,
    mode,
    answer: mode === "completion" ? "Soft rain on red leaves…" : "I can summarise, translate and draft text.",
    ...(mode === "chat" ? { conversation_id: conversationId } : {}),
    metadata: { usage },
    created_at: 1767225600,
  };
}

export const chatCompletionRequestExample = {
  model: "haiku-writer",
  messages: [
    { role: "system", content: "Answer briefly." },
    { role: "user", content: "Write a haiku about autumn rain." },
  ],
  user: "customer-42",
  inputs: { topic: "autumn rain" },
};

export const chatCompletionResponseExample = {
  id: "chatcmpl-5ad4cb98f0c74085b38488c403be6290",
  object: "chat.completion",
  created: 1767225600,
  model: "haiku-writer",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Soft rain on red leaves…", refusal: null },
      finish_reason: "stop",
      logprobs: null,
    },
  ],
  usage: {
    prompt_tokens: 18,
    completion_tokens: 42,
    total_tokens: 60,
    cost: 0.05,
    charged_cents: 5,
    paid_by: "wallet",
  },
};

export const insufficientBalanceExample = {
  code: "payment_required",
  message:
    "Insufficient balance: this call costs $0.05 and your wallet has $0.00 available. Top up at https://promptmint.example/wallet",
  status: 402,
};

export const conversationsExample = {
  limit: 20,
  has_more: false,
  data: [
    {
      id: conversationId,
      name: "What can you help me with?",
      inputs: {},
      status: "normal",
      introduction: "",
      created_at: 1767225600,
      updated_at: 1767225660,
    },
  ],
};

export const messagesExample = {
  limit: 20,
  has_more: false,
  data: [
    {
      id: messageId,
      conversation_id: conversationId,
      parent_message_id: null,
      inputs: {},
      query: "What can you help me with?",
      answer: "I can summarise, translate and draft text.",
      message_files: [],
      feedback: { rating: "like" },
      retriever_resources: [],
      agent_thoughts: [],
      status: "normal",
      error: null,
      created_at: 1767225600,
    },
  ],
};

export const modelsExample = {
  object: "list",
  data: [
    {
      id: "haiku-writer",
      object: "model",
      created: 1767225600,
      owned_by: "promptmint",
      accepts_tools: false,
      max_input_tokens: 7464,
    },
  ],
};

/** A Response object as `POST /v1/responses` and `GET /v1/responses/{id}` answer it. */
export const responseExample = {
  id: "resp_5ad4cb98f0c74085b38488c403be6290",
  object: "response",
  created_at: 1767225600,
  status: "completed",
  model: "haiku-writer",
  output: [
    {
      type: "message",
      id: "msg_5ad4cb98f0c74085b38488c403be6290",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Soft rain on red leaves…", annotations: [], logprobs: [] }],
    },
  ],
  usage: {
    input_tokens: 18,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 42,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 60,
    cost: 0.05,
    charged_cents: 5,
    paid_by: "wallet",
  },
};
