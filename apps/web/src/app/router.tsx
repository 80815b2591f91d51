import { createBrowserRouter, type RouteObject } from "react-router";
import { ApplicationAnalyticsPage } from "../features/analytics/application-analytics-page";
import { GlobalAnalyticsPage } from "../features/analytics/global-analytics-page";
import { ApiKeysPage } from "../features/api-keys/api-keys-page";
import { ApiTestPage } from "../features/api-test/api-test-page";
import { ApplicationDetailPage } from "../features/applications/application-detail-page";
import { CreateApplicationPage } from "../features/applications/create-application-page";
import { DashboardPage } from "../features/applications/dashboard-page";
import { AuthCallbackPage } from "../features/auth/auth-callback-page";
import { LoginPage } from "../features/auth/login-page";
import { RegisterPage } from "../features/auth/register-page";
import { ApplicationBillingPage } from "../features/billing/application-billing-page";
import { BillingSuccessPage } from "../features/billing/billing-success-page";
import { ExploreAppPage } from "../features/explore/explore-app-page";
import { ExplorePage } from "../features/explore/explore-page";
import { LandingPage } from "../features/landing/landing-page";
import { ProfileSettingsPage } from "../features/profile/profile-settings-page";
import { PromptBuilderPage } from "../features/prompts/prompt-builder-page";
import { PromptEditorPage } from "../features/prompts/prompt-editor-page";
import { PromptListPage } from "../features/prompts/prompt-list-page";
import { WalletPage } from "../features/wallet/wallet-page";
import { WorkflowEditorPage } from "../features/workflows/workflow-editor-page";
import { WorkflowListPage } from "../features/workflows/workflow-list-page";
import { AppLayout } from "./layout/app-layout";
import { AuthLayout } from "./layout/auth-layout";
import { NotFoundPage } from "./not-found-page";
import { ProtectedRoute } from "./protected-route";
import { RouteErrorPage } from "./route-error-page";

/** Every route of SPEC §2, in the order of its table, plus /api-keys and /wallet. */
export const appRoutes: RouteObject[] = [
  {
    errorElement: <RouteErrorPage />,
    children: [
      {
        element: <AuthLayout />,
        children: [
          { path: "/login", element: <LoginPage /> },
          { path: "/auth/login", element: <LoginPage /> },
          { path: "/register", element: <RegisterPage /> },
          { path: "/auth/register", element: <RegisterPage /> },
          { path: "/auth/callback", element: <AuthCallbackPage /> },
        ],
      },
      {
        element: <AppLayout />,
        children: [
          { path: "/", element: <LandingPage /> },
          {
            element: <ProtectedRoute />,
            children: [
              { path: "/dashboard", element: <DashboardPage /> },
              { path: "/applications", element: <DashboardPage /> },
              { path: "/applications/create", element: <CreateApplicationPage /> },
              { path: "/applications/new", element: <CreateApplicationPage /> },
              { path: "/applications/:slug", element: <ApplicationDetailPage /> },
              { path: "/applications/:slug/edit", element: <PromptBuilderPage /> },
              { path: "/applications/:appSlug/billing", element: <ApplicationBillingPage /> },
              { path: "/applications/:slug/analytics", element: <ApplicationAnalyticsPage /> },
              { path: "/analytics", element: <GlobalAnalyticsPage /> },
              { path: "/profile", element: <ProfileSettingsPage /> },
              { path: "/prompt-builder", element: <PromptBuilderPage /> },
              { path: "/prompts", element: <PromptListPage /> },
              { path: "/prompts/:slug", element: <PromptEditorPage /> },
              { path: "/workflows", element: <WorkflowListPage /> },
              { path: "/workflows/:slug", element: <WorkflowEditorPage /> },
              // Beyond SPEC's table (DESIGN §4): API keys shown once, for code and the test console.
              { path: "/api-keys", element: <ApiKeysPage /> },
              // Beyond SPEC's table (DESIGN §6): the prepaid wallet paid calls draw from; 402s point here.
              { path: "/wallet", element: <WalletPage /> },
            ],
          },
          { path: "/api-test", element: <ApiTestPage /> },
          // Beyond SPEC's table: the public catalogue of live apps, readable signed out.
          { path: "/explore", element: <ExplorePage /> },
          { path: "/explore/:slug", element: <ExploreAppPage /> },
          { path: "/billing/success", element: <BillingSuccessPage /> },
          { path: "*", element: <NotFoundPage /> },
        ],
      },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(appRoutes);
}
