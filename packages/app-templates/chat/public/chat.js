import { callApp, loadApp, readFields, renderFields, showApp, showError } from "./promptmint.js";

const form = document.querySelector("[data-form]");
const message = document.querySelector("#message");
const messages = document.querySelector("[data-messages]");
const fieldsBox = document.querySelector("[data-fields]");
const submit = document.querySelector("[data-submit]");
let conversationId = null;

function addMessage(role, text) {
  const item = document.createElement("li");
  item.className = `message ${role}`;
  item.setAttribute("aria-label", role === "user" ? "You" : "Assistant");
  item.textContent = text;
  messages.append(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

async function start() {
  const app = await loadApp();
  showApp(app);
  renderFields(fieldsBox, app.inputs);
  document.querySelector("[data-inputs]").hidden = app.inputs.length === 0;

  document.querySelector("[data-new]").addEventListener("click", () => {
    conversationId = null;
    messages.replaceChildren();
    showError(null);
  });

  // Enter sends, Shift+Enter starts a new line.
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = message.value.trim();
    if (!query) return;
    showError(null);
    submit.disabled = true;
    let reply;
    try {
      const inputs = readFields(fieldsBox, app.inputs);
      addMessage("user", query);
      message.value = "";
      reply = addMessage("assistant", "…");
      reply.setAttribute("aria-busy", "true");
      const answer = await callApp(
        "chat-messages",
        { inputs, query, ...(conversationId ? { conversation_id: conversationId } : {}) },
        (text) => {
          reply.textContent = text;
        },
      );
      reply.textContent = answer.answer;
      reply.removeAttribute("aria-busy");
      conversationId = answer.conversation_id ?? conversationId;
    } catch (error) {
      reply?.remove();
      if (!message.value) message.value = query;
      showError(error.message);
    } finally {
      submit.disabled = false;
      message.focus();
    }
  });
}

start().catch((error) => showError(error.message));
