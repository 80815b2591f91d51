import type { ComponentType } from "react";
import { createBrowserRouter, type RouteObject } from "react-router";
import { LoginPage } from "../features/auth/login-page";
import { RegisterPage } from "../features/auth/register-page";
import { LandingPage } from "../features/landing/landing-page";
import { AppLayout } from "./layout/app-layout";
import { AuthLayout } from "./layout/auth-layout";
import { RootLayout } from "./layout/root-layout";
import { NotFoundPage } from "./not-found-page";
import { ProtectedRoute } from "./protected-route";
import { RouteErrorPage } from "./route-error-page";

/**
 * A screen loaded on first visit: its code (charts, editors, Stripe) stays out of the first
 * load of every other route. The landing and sign-in screens are eager (see bench/web).
 */
function page<M>(load: () => Promise<M>, pick: (module: M) => ComponentType): RouteObject["lazy"] {
  return async () => ({ Component: pick(await load()) });
}

const dashboardPage = page(
  () => import("../features/applications/dashboard-page"),
  (m) => m.DashboardPage,
);

const createApplicationPage = page(
  () => import("../features/applications/create-application-page"),
  (m) => m.CreateApplicationPage,
);

const promptBuilderPage = page(
  () => import("../features/prompts/prompt-builder-page"),
  (m) => m.PromptBuilderPage,
);

/** Every route of SPEC §2, in the order of its table, plus /api-keys, /webhooks and /wallet. */
export const appRoutes: RouteObject[] = [
  {
    element: <RootLayout />,
    errorElement: <RouteErrorPage />,
    children: [
      {
        element: <AuthLayout />,
        children: [
          { path: "/login", element: <LoginPage /> },
          { path: "/auth/login", element: <LoginPage /> },
          { path: "/register", element: <RegisterPage /> },
          { path: "/auth/register", element: <RegisterPage /> },
          {
            path: "/auth/callback",
            lazy: page(
              () => import("../features/auth/auth-callback-page"),
              (m) => m.AuthCallbackPage,
            ),
          },
        ],
      },
      {
        element: <AppLayout />,
        children: [
          { path: "/", element: <LandingPage /> },
          {
            element: <ProtectedRoute />,
            children: [
              { path: "/dashboard", lazy: dashboardPage },
              {
                path: "/applications",
                lazy: page(
                  () => import("../features/applications/dashboard-page"),
                  (m) => m.ApplicationsPage,
                ),
              },
              { path: "/applications/create", lazy: createApplicationPage },
              { path: "/applications/new", lazy: createApplicationPage },
              {
                path: "/applications/:slug",
                lazy: page(
                  () => import("../features/applications/application-detail-page"),
                  (m) => m.ApplicationDetailPage,
                ),
              },
              { path: "/applications/:slug/edit", lazy: promptBuilderPage },
              {
                path: "/applications/:appSlug/billing",
                lazy: page(
                  () => import("../features/billing/application-billing-page"),
                  (m) => m.ApplicationBillingPage,
                ),
              },
              {
                path: "/applications/:slug/analytics",
                lazy: page(
                  () => import("../features/analytics/application-analytics-page"),
                  (m) => m.ApplicationAnalyticsPage,
                ),
              },
              {
                path: "/analytics",
                lazy: page(
                  () => import("../features/analytics/global-analytics-page"),
                  (m) => m.GlobalAnalyticsPage,
                ),
              },
              {
                path: "/profile",
                lazy: page(
                  () => import("../features/profile/profile-settings-page"),
                  (m) => m.ProfileSettingsPage,
                ),
              },
              { path: "/prompt-builder", lazy: promptBuilderPage },
              {
                path: "/prompts",
                lazy: page(
                  () => import("../features/prompts/prompt-list-page"),
                  (m) => m.PromptListPage,
                ),
              },
              {
                path: "/prompts/:slug",
                lazy: page(
                  () => import("../features/prompts/prompt-editor-page"),
                  (m) => m.PromptEditorPage,
                ),
              },
              {
                path: "/prompts/:slug/experiments",
                lazy: page(
                  () => import("../features/releases/experiments-page"),
                  (m) => m.ExperimentsPage,
                ),
              },
              {
                path: "/prompts/:slug/evals",
                lazy: page(
                  () => import("../features/releases/evals-page"),
                  (m) => m.EvalsPage,
                ),
              },
              {
                path: "/prompts/:slug/versions",
                lazy: page(
                  () => import("../features/releases/versions-page"),
                  (m) => m.VersionsPage,
                ),
              },
              {
                path: "/workflows",
                lazy: page(
                  () => import("../features/workflows/workflow-list-page"),
                  (m) => m.WorkflowListPage,
                ),
              },
              {
                path: "/workflows/:slug",
                lazy: page(
                  () => import("../features/workflows/workflow-editor-page"),
                  (m) => m.WorkflowEditorPage,
                ),
              },
              // The releases pages serve both kinds of app (docs/decisions/079).
              {
                path: "/workflows/:slug/versions",
                lazy: page(
                  () => import("../features/releases/versions-page"),
                  (m) => m.WorkflowVersionsPage,
                ),
              },
              {
                path: "/workflows/:slug/experiments",
                lazy: page(
                  () => import("../features/releases/experiments-page"),
                  (m) => m.WorkflowExperimentsPage,
                ),
              },
              {
                path: "/workflows/:slug/evals",
                lazy: page(
                  () => import("../features/releases/evals-page"),
                  (m) => m.WorkflowEvalsPage,
                ),
              },
              // Beyond SPEC's table (DESIGN §4): API keys shown once, for code and the test console.
              {
                path: "/api-keys",
                lazy: page(
                  () => import("../features/api-keys/api-keys-page"),
                  (m) => m.ApiKeysPage,
                ),
              },
              // Beyond SPEC's table (decision 068): webhook endpoints and their delivery log, for every user.
              {
                path: "/webhooks",
                lazy: page(
                  () => import("../features/webhooks/webhooks-page"),
                  (m) => m.WebhooksPage,
                ),
              },
              // Issue 17: the operator's view (the operator role only; the API refuses everyone else).
              {
                path: "/admin",
                lazy: page(
                  () => import("../features/admin/admin-page"),
                  (m) => m.AdminPage,
                ),
              },
              // Beyond SPEC's table (DESIGN §6): the prepaid wallet paid calls draw from; 402s point here.
              {
                path: "/wallet",
                lazy: page(
                  () => import("../features/wallet/wallet-page"),
                  (m) => m.WalletPage,
                ),
              },
              // Issue 42: every subscription of the signed-in person, across apps.
              {
                path: "/subscriptions",
                lazy: page(
                  () => import("../features/subscriptions/my-subscriptions-page"),
                  (m) => m.MySubscriptionsPage,
                ),
              },
              // Issue 43: organizations (docs/decisions/084): the ones you belong to, and one's members,
              // invitations, usage, settings and audit log.
              {
                path: "/organizations",
                lazy: page(
                  () => import("../features/organizations/organizations-page"),
                  (m) => m.OrganizationsPage,
                ),
              },
              {
                path: "/organizations/:id",
                lazy: page(
                  () => import("../features/organizations/organization-page"),
                  (m) => m.OrganizationPage,
                ),
              },
              // Issue 17: creators' earnings, payouts through Stripe Connect (or the sandbox), statements.
              {
                path: "/earnings",
                lazy: page(
                  () => import("../features/earnings/earnings-page"),
                  (m) => m.EarningsPage,
                ),
              },
            ],
          },
          // Issue 43: an emailed invitation; signed out it offers sign-in, which comes back here.
          {
            path: "/invitations/:token",
            lazy: page(
              () => import("../features/organizations/invitation-page"),
              (m) => m.InvitationPage,
            ),
          },
          {
            path: "/api-test",
            lazy: page(
              () => import("../features/api-test/api-test-page"),
              (m) => m.ApiTestPage,
            ),
          },
          // Beyond SPEC's table: the public catalogue of live apps, readable signed out.
          {
            path: "/explore",
            lazy: page(
              () => import("../features/explore/explore-page"),
              (m) => m.ExplorePage,
            ),
          },
          {
            path: "/explore/:slug",
            lazy: page(
              () => import("../features/explore/explore-app-page"),
              (m) => m.ExploreAppPage,
            ),
          },
          {
            path: "/billing/success",
            lazy: page(
              () => import("../features/billing/billing-success-page"),
              (m) => m.BillingSuccessPage,
            ),
          },
          { path: "*", element: <NotFoundPage /> },
        ],
      },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(appRoutes);
}
