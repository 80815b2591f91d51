import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, render } from "@testing-library/react";
import { type ReactNode, useState } from "react";
import { AuthContext, type AuthContextProps } from "react-oidc-context";
import { createMemoryRouter, parsePath, type RouteObject } from "react-router";
import { RouterProvider } from "react-router/dom";
import { Toaster } from "sonner";
import { vi } from "vitest";
import { appRoutes } from "../app/router";
import { RuntimeConfigProvider } from "../lib/runtime-config";
import { createTestAuth } from "./auth-state";
import { stubFetch } from "./fetch-stub";
import { runtimeConfigFixture } from "./fixtures";

// The app loads most screens on first visit (route `lazy`); tests render them synchronously, so
// the route table is resolved once, as the browser would after loading each chunk. Here rather
// than in setup.ts, so the modules load after the test file's `vi.mock`s.
async function resolveLazyRoutes(routes: RouteObject[]): Promise<void> {
  for (const route of routes) {
    if (typeof route.lazy === "function") {
      Object.assign(route, await route.lazy());
      delete route.lazy;
    }
    if (route.children) await resolveLazyRoutes(route.children);
  }
}
await resolveLazyRoutes(appRoutes);
// Same for the navbar's user menu and account switcher (React.lazy): loaded now, it renders without a visible wait.
await import("../app/layout/user-menu");
await import("../components/organizations/account-switcher");

export function createTestQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, gcTime: Number.POSITIVE_INFINITY },
      mutations: { retry: false },
    },
  });
}

interface AuthHost {
  set: (next: AuthContextProps) => void;
}

/** Holds the auth value in state so a test (or removeUser) can change it after rendering. */
function TestAuthProvider({
  initial,
  host,
  children,
}: {
  initial: AuthContextProps;
  host: AuthHost;
  children: ReactNode;
}) {
  const [current, setCurrent] = useState(initial);
  host.set = setCurrent;
  return <AuthContext value={current}>{children}</AuthContext>;
}

export interface RenderRouteOptions {
  /** The auth state the app sees; signed out by default. See createTestAuth. */
  auth?: AuthContextProps;
  queryClient?: QueryClient;
  /** Router state of the first entry, e.g. `{ from: { pathname: "/profile" } }`. */
  state?: unknown;
  routes?: RouteObject[];
}

/**
 * Renders the app's real route list at `path` in memory, with a fresh query client and the
 * given auth state. Like the real provider, the auth's `removeUser` signs the user out, and
 * `setAuth` changes the state later. Stub `fetch` before calling it.
 */
export function renderRoute(path: string, options: RenderRouteOptions = {}) {
  const auth = options.auth ?? createTestAuth("signed-out");
  const queryClient = options.queryClient ?? createTestQueryClient();
  const router = createMemoryRouter(options.routes ?? appRoutes, {
    initialEntries: [{ ...parsePath(path), state: options.state }],
  });

  const authHost: AuthHost = { set: () => undefined };
  const setAuth = (next: AuthContextProps) => act(() => authHost.set(next));
  vi.mocked(auth.removeUser).mockImplementation(async () => {
    authHost.set({ ...auth, user: null, isAuthenticated: false, isLoading: false });
  });

  const view = render(
    <QueryClientProvider client={queryClient}>
      <RuntimeConfigProvider config={runtimeConfigFixture()}>
        <TestAuthProvider initial={auth} host={authHost}>
          <RouterProvider router={router} />
        </TestAuthProvider>
        <Toaster />
      </RuntimeConfigProvider>
    </QueryClientProvider>,
  );
  return { ...view, router, auth, setAuth, queryClient };
}

/** The router's current path with its search. */
export function currentPath(router: ReturnType<typeof createMemoryRouter>): string {
  const { pathname, search } = router.state.location;
  return `${pathname}${search}`;
}

/** Renders `path` for a signed-in person (most screens' tests). */
export function renderSignedIn(path: string, options: Omit<RenderRouteOptions, "auth"> = {}) {
  return renderRoute(path, { ...options, auth: createTestAuth("signed-in") });
}

/**
 * Renders a sign-in screen (/login, /register) for a signed-out person; their redirect to the
 * identity provider answers with `redirect`. Returns the auth, to check what was asked of it.
 */
export function renderSignInScreen(path: string, redirect: () => Promise<unknown>) {
  stubFetch({});
  const auth = createTestAuth("signed-out");
  vi.mocked(auth.signinRedirect).mockImplementation(redirect as () => Promise<void>);
  renderRoute(path, { auth });
  return auth;
}
