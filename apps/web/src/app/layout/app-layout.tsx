import { Outlet } from "react-router";
import { Navbar } from "./navbar";

/** Every screen but sign-in and sign-up: the navigation bar above the screen. */
export function AppLayout() {
  return (
    <div className="flex min-h-screen flex-col">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-white px-3 py-2 text-sm font-medium text-brand-700 shadow focus:not-sr-only focus:fixed focus:top-3 focus:left-3"
      >
        Skip to content
      </a>
      <Navbar />
      {/* At least a screen tall under the bar, so the footer starts below the fold: a screen's content
          growing as its data arrives never moves it in view (layout shift). */}
      <main id="main" className="min-h-[calc(100svh-4rem)] flex-1">
        <Outlet />
      </main>
      <footer className="border-t border-slate-200 bg-white">
        <div className="mx-auto flex max-w-7xl flex-col gap-2 px-4 py-6 text-xs text-slate-500 sm:flex-row sm:justify-between sm:px-6 lg:px-8">
          <p>© {new Date().getFullYear()} Promptmint</p>
          <p>Turn AI prompts and workflows into paid APIs.</p>
        </div>
      </footer>
    </div>
  );
}
