// What both pages share: the app's description (app.json), calls through ./server.mjs, input fields.

/** The app's name, description, mode and input fields, written into app.json by Promptmint. */
export async function loadApp() {
  const response = await fetch("/app.json");
  if (!response.ok) throw new Error(`Could not load app.json (${response.status})`);
  return response.json();
}

/** Shows the app's name and description in the page header and title. */
export function showApp(app) {
  document.title = app.name;
  document.querySelector("[data-app-name]").textContent = app.name;
  document.querySelector("[data-app-description]").textContent = app.description;
}

/** A stable id for this browser, sent as Dify's `user` so conversations stay per person. */
function endUser() {
  let id = localStorage.getItem("promptmint-user");
  if (!id) {
    id = `web-${crypto.randomUUID()}`;
    localStorage.setItem("promptmint-user", id);
  }
  return id;
}

const HINTS = {
  401: "The API key was refused: check PROMPTMINT_API_KEY in .env.",
  402: "The account behind the API key is out of credit: top up its wallet on Promptmint.",
  404: "The app was not found: check PROMPTMINT_APP_SLUG in .env, and that the app is live.",
  429: "Too many requests: wait a moment and try again.",
};

function callError(status, payload) {
  const message =
    payload.detail ?? payload.message ?? payload.error ?? `Request failed with status ${status}`;
  const hint = HINTS[status];
  return new Error(`Error ${status}: ${message}${hint && hint !== message ? ` ${hint}` : ""}`);
}

/**
 * POSTs to /api/{endpoint} (forwarded to Promptmint) in streaming mode: `onAnswer` gets the answer
 * so far as it arrives; resolves with the whole answer, its conversation id and usage. A failure
 * throws with a readable message.
 */
export async function callApp(endpoint, body, onAnswer = () => {}) {
  let response;
  try {
    response = await fetch(`/api/${endpoint}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ ...body, response_mode: "streaming", user: endUser() }),
    });
  } catch {
    throw new Error("The app's server could not be reached. Is `node server.mjs` running?");
  }
  if (!response.ok) throw callError(response.status, await response.json().catch(() => ({})));

  // Server-sent events as Dify sends them: `data: {json}` blocks; `event: ping` keeps the line open.
  const result = { answer: "", conversation_id: undefined, metadata: undefined };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop();
    for (const block of blocks) {
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("");
      if (!data) continue;
      const event = JSON.parse(data);
      if (event.event === "error") throw callError(event.status ?? 500, event);
      result.conversation_id = event.conversation_id ?? result.conversation_id;
      if (event.event === "message") {
        result.answer += event.answer;
        onAnswer(result.answer);
      } else if (event.event === "message_end") result.metadata = event.metadata;
    }
  }
  return result;
}

/** Shows `message` in the page's alert box, or hides the box when there is none. */
export function showError(message) {
  const box = document.querySelector("[data-error]");
  box.textContent = message ?? "";
  box.hidden = !message;
}

/** Adds a labelled control for every input field (text, number, checkbox, select or JSON). */
export function renderFields(container, fields) {
  for (const field of fields) {
    const id = `input-${field.variable}`;
    const wrapper = document.createElement("div");
    wrapper.className = "field";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = field.label + (field.required ? " *" : "");
    let control;
    if (field.options) {
      control = document.createElement("select");
      field.options.forEach((option, index) => {
        const text = typeof option === "object" ? JSON.stringify(option) : String(option);
        control.add(new Option(text, String(index), false, option === field.default));
      });
    } else if (field.type === "boolean") {
      control = document.createElement("input");
      control.type = "checkbox";
      control.checked = field.default === true;
      wrapper.classList.add("checkbox");
    } else if (field.type === "number" || field.type === "integer") {
      control = document.createElement("input");
      control.type = "number";
      if (field.type === "number") control.step = "any";
      control.value = field.default ?? "";
    } else {
      control = document.createElement(field.type === "string" && field.max_length ? "input" : "textarea");
      if (control instanceof HTMLTextAreaElement) control.rows = 3;
      if (field.max_length) control.maxLength = field.max_length;
      const initial = field.default ?? "";
      control.value = typeof initial === "string" ? initial : JSON.stringify(initial);
    }
    control.id = id;
    control.name = field.variable;
    if (field.required && field.type !== "boolean") control.required = true;
    wrapper.append(label, control);
    container.append(wrapper);
  }
}

/** The fields' values, typed as the app's input schema expects; empty optional fields are left out. */
export function readFields(container, fields) {
  const inputs = {};
  for (const field of fields) {
    const control = container.querySelector(`[name="${field.variable}"]`);
    if (field.options) inputs[field.variable] = field.options[Number(control.value)];
    else if (field.type === "boolean") inputs[field.variable] = control.checked;
    else if (control.value.trim() === "") continue;
    else if (field.type === "number" || field.type === "integer")
      inputs[field.variable] = Number(control.value);
    else if (field.type === "array" || field.type === "object") {
      try {
        inputs[field.variable] = JSON.parse(control.value);
      } catch {
        throw new Error(`${field.label} must be valid JSON`);
      }
    } else inputs[field.variable] = control.value;
  }
  return inputs;
}
