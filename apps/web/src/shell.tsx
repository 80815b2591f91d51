/**
 * The first paint of the landing page and the dashboard, rendered at build time
 * (scripts/prerender.mjs) and written by the server into `#root` (apps/api/src/web.ts), so the
 * page shows its real layout and heading before any JavaScript has loaded. The app then renders
 * over it (main.tsx waits until the route's code is loaded, so the shell is never replaced by a
 * blank screen). See docs/decisions/016-web-first-load.md.
 *
 * The states rendered here are the ones the app shows first: the landing page signed out, the
 * dashboard with its applications still loading and the session not yet read (no user data is
 * ever part of a shell).
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { AuthContext, type AuthContextProps } from "react-oidc-context";
import { MemoryRouter, Route, Routes } from "react-router";
import { AppLayout } from "./app/layout/app-layout";
import { DashboardPage } from "./features/applications/dashboard-page";
import { LandingPage } from "./features/landing/landing-page";

/** The routes that get a shell, and the path each is rendered at. */
export const shellRoutes = {
  "/": { path: "/", page: <LandingPage />, isLoading: false },
  "/dashboard": { path: "/dashboard", page: <DashboardPage />, isLoading: true },
} as const;

function Shell({ path, isLoading, children }: { path: string; isLoading: boolean; children: ReactNode }) {
  // Only what the shell's components read: a session that is loading (dashboard) or absent (landing).
  const auth = { isLoading, isAuthenticated: false, user: null } as unknown as AuthContextProps;
  const queryClient = new QueryClient({ defaultOptions: { queries: { enabled: false } } });
  return (
    <QueryClientProvider client={queryClient}>
      <AuthContext value={auth}>
        <MemoryRouter initialEntries={[path]}>
          <Routes>
            <Route element={<AppLayout />}>
              <Route path={path} element={children} />
            </Route>
          </Routes>
        </MemoryRouter>
      </AuthContext>
    </QueryClientProvider>
  );
}

/** Route → the HTML to put inside `#root`. */
export function renderShells(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(shellRoutes).map(([route, { path, page, isLoading }]) => [
      route,
      renderToStaticMarkup(
        <Shell path={path} isLoading={isLoading}>
          {page}
        </Shell>,
      ),
    ]),
  );
}
