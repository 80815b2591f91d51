import { escapeHtml } from "../../lib/html.ts";

export interface WidgetField {
  name: string;
  label: string;
  required: boolean;
  type: "text" | "number";
}

export interface WidgetConfig {
  slug: string;
  name: string;
  mode: "completion" | "chat";
  token: string;
  fields: WidgetField[];
  /** The app's plans on Promptmint (`/explore/{slug}#plans`), where a visitor can subscribe. */
  plansUrl: string;
}

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/embed/assets/widget.css">
${scripts.map((src) => `<script src="${src}" defer></script>`).join("\n")}
</head>
<body>
${body}
</body>
</html>`;
}

/** The widget for one visitor: its token travels in a JSON block, never executed, so the CSP stays strict. */
export function renderWidgetPage(config: WidgetConfig): string {
  const json = JSON.stringify(config).replace(/</g, "\\u003c");
  const fields = config.fields
    .map(
      (field) =>
        `<label>${escapeHtml(field.label)}${field.required ? "" : " (optional)"}
  <input name="${escapeHtml(field.name)}" data-input="${field.type}" type="${field.type}"${field.required ? " required" : ""}>
</label>`,
    )
    .join("\n");
  const chat = config.mode === "chat";
  return layout(
    config.name,
    `<script type="application/json" id="promptmint-embed">${json}</script>
<header>
  <h1>${escapeHtml(config.name)}</h1>
  <p>${chat ? "Ask me anything" : "Type your text and get an answer"}</p>
</header>
<ol role="log" aria-label="Conversation" aria-live="polite"></ol>
<form>
${fields}
  <label>${chat ? "Message" : "Your text"}
    <textarea name="query" rows="2" maxlength="4000" required></textarea>
  </label>
  <button type="submit">Send</button>
</form>
<footer><a href="${escapeHtml(config.plansUrl)}" target="_blank" rel="noopener">Plans</a> · Powered by Promptmint</footer>`,
    ["/embed/assets/widget.js"],
  );
}

/** What a page that may not show the widget (or a direct visit) sees instead. */
export function renderUnavailablePage(message: string): string {
  return layout("Unavailable", `<p class="unavailable">${escapeHtml(message)}</p>`);
}
