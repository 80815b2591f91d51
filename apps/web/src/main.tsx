// zod's settings (boot.ts makes them first on the page; here too for whatever imports this module).
import "./app/zod-config";
import { StrictMode, startTransition } from "react";
import { createRoot } from "react-dom/client";
import { RouterProvider } from "react-router/dom";
import { AppProviders } from "./app/app-providers";
import { completeSilentRenewInFrame, isSilentRenewFrame } from "./app/oidc-auth-provider";
import { createQueryClient } from "./app/query-client";
import { createAppRouter } from "./app/router";

const container = document.getElementById("root");
if (!container) throw new Error("The page has no #root element");

if (isSilentRenewFrame()) {
  void completeSilentRenewInFrame();
} else {
  const router = createAppRouter();
  const queryClient = createQueryClient();

  // The server may have written the route's first paint into #root (src/shell.tsx): it stays
  // until the route's code has loaded, instead of giving way to a blank page meanwhile. The
  // render is a transition so that it yields to the browser rather than block it in one task.
  routerReady(router).then(() =>
    startTransition(() =>
      createRoot(container).render(
        <StrictMode>
          <AppProviders queryClient={queryClient}>
            <RouterProvider router={router} />
          </AppProviders>
        </StrictMode>,
      ),
    ),
  );
}

/** Resolves once the router has loaded the first location's lazy route modules. */
function routerReady(router: ReturnType<typeof createAppRouter>): Promise<void> {
  return new Promise((resolve) => {
    if (router.state.initialized) return resolve();
    const unsubscribe = router.subscribe((state) => {
      if (!state.initialized) return;
      unsubscribe();
      resolve();
    });
  });
}
