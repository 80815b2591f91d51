/**
 * The page's only script. When the server wrote a first paint into #root (src/shell.tsx), the
 * app's code is requested after that paint, so nothing competes with the page for it; then the
 * route's module is requested beside the app's, not after it (docs/decisions/016).
 * Without a shell (every other route), the app starts at once.
 */
// First: zod's settings, before any chunk that holds zod is evaluated (app/zod-config.ts).
import "./app/zod-config";
import "./index.css";

const routeModules: Record<string, () => Promise<unknown>> = {
  "/dashboard": () => import("./features/applications/dashboard-page"),
  "/applications": () => import("./features/applications/dashboard-page"),
};

/** After the next frame is painted, or soon anyway (no frames are painted in a background tab). */
function afterNextPaint(): Promise<void> {
  return new Promise((resolve) => {
    const fallback = setTimeout(resolve, 250);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(fallback);
        resolve();
      }, 0),
    );
  });
}

/**
 * The first use of web storage in a page waits for the browser process; while the app's files
 * are arriving that wait grew to tens of milliseconds inside the app's start-up task. Opening
 * both stores now, while the browser is idle, costs about a millisecond.
 */
function openWebStorage() {
  try {
    void window.localStorage.length;
    void window.sessionStorage.length;
  } catch {
    // Storage disabled: the app copes (oidc-client-ts and React Router catch it too).
  }
}

async function boot() {
  openWebStorage();
  if (document.getElementById("root")?.firstElementChild) await afterNextPaint();
  const app = import("./main");
  // The router loads it too (a lazy route), once the app has started: both get the same module.
  // Requested in a task of its own, so as not to lengthen this one.
  const route = routeModules[window.location.pathname];
  if (route) setTimeout(() => void route().catch(() => undefined), 0);
  await app;
}

void boot();
