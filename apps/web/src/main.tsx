// First: configures zod before any schema module is evaluated.
import "./app/zod-config";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { RouterProvider } from "react-router/dom";
import { AppProviders } from "./app/app-providers";
import { completeSilentRenewInFrame, isSilentRenewFrame } from "./app/oidc-auth-provider";
import { createQueryClient } from "./app/query-client";
import { createAppRouter } from "./app/router";
import "./index.css";

const container = document.getElementById("root");
if (!container) throw new Error("The page has no #root element");

if (isSilentRenewFrame()) {
  void completeSilentRenewInFrame();
} else {
  const router = createAppRouter();
  const queryClient = createQueryClient();

  createRoot(container).render(
    <StrictMode>
      <AppProviders queryClient={queryClient}>
        <RouterProvider router={router} />
      </AppProviders>
    </StrictMode>,
  );
}
