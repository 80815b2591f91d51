// The embedded widget: sends the visitor's messages with the embed token and shows the answers.
(() => {
  const config = JSON.parse(document.getElementById("promptmint-embed").textContent);
  const form = document.querySelector("form");
  const log = document.querySelector("[role=log]");
  const message = form.elements.namedItem("query");
  const send = form.querySelector("button[type=submit]");
  let conversationId = null;

  function show(role, text) {
    const item = document.createElement("li");
    item.className = role;
    item.textContent = text;
    log.append(item);
    log.scrollTop = log.scrollHeight;
  }

  function inputs() {
    const values = {};
    for (const field of form.querySelectorAll("[data-input]")) {
      if (field.value === "") continue;
      values[field.name] = field.dataset.input === "number" ? Number(field.value) : field.value;
    }
    return values;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = message.value.trim();
    if (!query) return;
    show("visitor", query);
    message.value = "";
    send.disabled = true;
    send.textContent = "Sending...";
    try {
      const response = await fetch(`/api/embed/${encodeURIComponent(config.slug)}/messages`, {
        method: "POST",
        headers: { authorization: `Embed ${config.token}`, "content-type": "application/json" },
        body: JSON.stringify({ query, inputs: inputs(), conversation_id: conversationId }),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        if (body.conversation_id) conversationId = body.conversation_id;
        show("assistant", body.answer);
      } else if (response.status === 401) {
        show("notice", "This chat has expired. Reloading...");
        window.parent.postMessage("promptmint:reload", "*");
      } else if (response.status === 402 || response.status >= 500) {
        show("notice", "This assistant is unavailable right now. Please try again later.");
      } else {
        show("notice", body.message || "Your message could not be sent.");
      }
    } catch {
      show("notice", "This assistant is unavailable right now. Please try again later.");
    } finally {
      send.disabled = false;
      send.textContent = "Send";
      message.focus();
    }
  });

  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
})();
