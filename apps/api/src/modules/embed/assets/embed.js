// Promptmint embed loader: <script src="https://…/embed.js" data-app="your-app-slug" async></script>
// Adds the app's widget (an iframe served by Promptmint) where the tag is.
(() => {
  const script = document.currentScript;
  const slug = script?.dataset.app;
  if (!script || !slug) return;
  const base = new URL(script.src).origin;
  const frame = document.createElement("iframe");
  const widgetUrl = `${base}/embed/${encodeURIComponent(slug)}`;
  frame.src = widgetUrl;
  frame.title = script.dataset.title || "Assistant";
  // The widget is issued for this page's origin, so it must be sent even under a strict policy.
  frame.referrerPolicy = "origin";
  frame.setAttribute("allow", "clipboard-write");
  frame.style.cssText =
    "display:block;width:100%;max-width:420px;height:520px;border:1px solid #e2e8f0;border-radius:12px;background:#fff";
  // An expired widget asks to be loaded again, which issues it a fresh token.
  window.addEventListener("message", (event) => {
    if (event.origin === base && event.source === frame.contentWindow && event.data === "promptmint:reload")
      frame.src = widgetUrl;
  });
  if (script.parentElement && script.parentElement !== document.head) script.after(frame);
  else if (document.body) document.body.append(frame);
  else document.addEventListener("DOMContentLoaded", () => document.body.append(frame));
})();
