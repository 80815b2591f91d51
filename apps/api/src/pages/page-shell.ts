/**
 * The shell of every server-rendered page (the issuer's sign-in pages, the sandbox's payout
 * onboarding): the brand, one card, a footnote, and one stylesheet. No inline script or style,
 * so the strict CSP holds.
 */

import { escapeHtml } from "../lib/html.ts";

/** Where pages.routes.ts serves the shell's stylesheet, whichever issuer the server runs with. */
export const PAGE_SHELL_CSS = "/pages/assets/page-shell.css";

/** The Promptmint mark (the web app's LogoMark): a "P" on the brand colour. */
export const LOGO_MARK_SVG = `<svg class="mark" viewBox="0 0 32 32" width="32" height="32" aria-hidden="true"><rect width="32" height="32" rx="8" fill="#2563eb"/><path d="M9 23V9h7.5a4.5 4.5 0 0 1 0 9H13" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/><circle cx="22.5" cy="22.5" r="2.5" fill="#93c5fd"/></svg>`;

export function pageShell(options: {
  title: string;
  /** The card's HTML, escaped by the caller. */
  body: string;
  /** The line under the card. */
  foot: string;
  scripts?: string[];
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)} · Promptmint</title>
<link rel="stylesheet" href="${PAGE_SHELL_CSS}">
${(options.scripts ?? []).map((src) => `<script src="${src}" defer></script>`).join("\n")}
</head>
<body>
<main class="shell">
  <a class="brand" href="/">${LOGO_MARK_SVG}Promptmint</a>
  <section class="card">${options.body}</section>
  <p class="foot">${escapeHtml(options.foot)}</p>
</main>
</body>
</html>`;
}
