// Runs before Scalar's bundle (the page loads this file first), mounts the reference once the
// bundle has run. The configuration is the page's JSON data block: no inline script anywhere.

// Zod, inside the bundle, probes for eval with Function("") on first use; script-src 'self'
// refuses it and the browser reports a CSP violation. Jitless (zod's global config, what
// z.config({ jitless: true }) sets) skips the probe; validation is the same, interpreted.
globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };

document.addEventListener("DOMContentLoaded", () => {
  const configuration = JSON.parse(document.getElementById("api-reference-configuration").textContent);
  const root = document.getElementById("api-reference-root");
  root.replaceChildren();
  window.Scalar.createApiReference(root, configuration);
});
