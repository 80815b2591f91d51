/**
 * The page's only script. When the server wrote a first paint into #root (src/shell.tsx), the
 * app's code is requested after that paint, so nothing competes with the page for it; then the
 * route's module is requested beside the app's, not after it (docs/decisions/016).
 * Without a shell (every other route), the app starts at once.
 */
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

async function boot() {
  if (document.getElementById("root")?.firstElementChild) await afterNextPaint();
  const app = import("./main");
  // The router loads it too (a lazy route), once the app has started: both get the same module.
  void routeModules[window.location.pathname]?.().catch(() => undefined);
  await app;
}

void boot();
