import { callApp, loadApp, readFields, renderFields, showApp, showError } from "./promptmint.js";

const form = document.querySelector("[data-form]");
const fieldsBox = document.querySelector("[data-fields]");
const submit = document.querySelector("[data-submit]");
const result = document.querySelector("[data-result]");

async function start() {
  const app = await loadApp();
  showApp(app);
  renderFields(fieldsBox, app.inputs);
  document.querySelector("[data-no-inputs]").hidden = app.inputs.length > 0;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(null);
    submit.disabled = true;
    submit.textContent = "Generating...";
    try {
      const inputs = readFields(fieldsBox, app.inputs);
      // Workflow apps get the text as Dify's `query` too; prompt apps read only their inputs.
      const body = app.app_type === "workflow" ? { inputs, query: inputs.query } : { inputs };
      const answerBox = document.querySelector("[data-answer]");
      const answer = await callApp("completion-messages", body, (text) => {
        answerBox.textContent = text;
        result.hidden = false;
      });
      answerBox.textContent = answer.answer;
      const usage = answer.metadata?.usage;
      document.querySelector("[data-usage]").textContent = usage
        ? `${usage.total_tokens} tokens · ${Number(usage.latency).toFixed(2)} s`
        : "";
      result.hidden = false;
    } catch (error) {
      showError(error.message);
    } finally {
      submit.disabled = false;
      submit.textContent = "Generate";
    }
  });
}

start().catch((error) => showError(error.message));
