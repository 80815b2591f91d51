import { AlertTriangle, RotateCw } from "lucide-react";
import { isRouteErrorResponse, useRouteError } from "react-router";
import { Button, buttonClasses } from "../components/ui/button";
import { LogoMark } from "../components/ui/logo";
import { useDocumentTitle } from "../lib/document-title";

function describeError(error: unknown): string {
  if (isRouteErrorResponse(error)) return `${error.status} ${error.statusText}`.trim();
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === "string" && error) return error;
  return "Something went wrong while showing this page.";
}

/** The router's error screen (root errorElement): a crash in any screen lands here. */
export function RouteErrorPage() {
  const error = useRouteError();
  useDocumentTitle("Something went wrong");

  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-lg text-center">
        <LogoMark className="mx-auto size-10" />
        <div className="mt-8 rounded-xl border border-slate-200 bg-white px-6 py-10 shadow-sm shadow-slate-900/5">
          <div className="mx-auto flex size-12 items-center justify-center rounded-full bg-red-50 text-red-600">
            <AlertTriangle className="size-6" aria-hidden="true" />
          </div>
          <h1 className="mt-5 text-xl font-semibold text-slate-900">Unexpected Application Error!</h1>
          <p className="mt-3 break-words rounded-lg bg-slate-50 px-4 py-3 font-mono text-sm text-slate-700">
            {describeError(error)}
          </p>
          <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">
            <Button onClick={() => window.location.reload()}>
              <RotateCw className="size-4" aria-hidden="true" />
              Reload page
            </Button>
            {/* A full page load, in case the router itself is what failed. */}
            <a href="/" className={buttonClasses("secondary")}>
              Go home
            </a>
          </div>
        </div>
      </div>
    </main>
  );
}
