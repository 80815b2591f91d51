import { LOGO_MARK_SVG } from "./page-shell.ts";

/** Where Scalar's Fastify integration serves its standalone bundle (pages.routes.ts). */
export const SCALAR_SCRIPT = "/api/docs/js/scalar.js";

/**
 * What Scalar is told (its configuration, read by assets/api-reference.js): the public document,
 * nothing fetched from Scalar's servers (fonts, telemetry, agent, hosted client), light only like
 * the web app.
 */
const scalarConfiguration = {
  url: "/api/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
  documentDownloadType: "json",
  forceDarkModeState: "light",
  hideDarkModeToggle: true,
  metaData: { title: "API reference · Promptmint" },
  favicon: "/favicon.svg",
};

/**
 * The API reference (/api/docs): Promptmint's header over Scalar's reference. Its scripts are
 * files of this origin and its configuration a JSON data block, so script-src 'self' holds.
 */
export function apiReferencePage(): string {
  const configuration = JSON.stringify(scalarConfiguration).replaceAll("<", "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Promptmint</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/pages/assets/api-reference.css">
<script src="/pages/assets/api-reference.js" defer></script>
<script src="${SCALAR_SCRIPT}" defer></script>
</head>
<body>
<header class="pm-header">
  <a class="pm-brand" href="/dashboard">${LOGO_MARK_SVG}<span>Promptmint</span></a>
  <span class="pm-title">API reference</span>
  <a class="pm-back" href="/dashboard"><span aria-hidden="true">←</span> Back to Promptmint</a>
</header>
<main id="api-reference-root"><p class="pm-loading">Loading the API reference…</p></main>
<script id="api-reference-configuration" type="application/json">${configuration}</script>
</body>
</html>`;
}
