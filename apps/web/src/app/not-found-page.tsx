import { ButtonLink } from "../components/ui/button";
import { useDocumentTitle } from "../lib/document-title";

export function NotFoundPage() {
  useDocumentTitle("Page not found");
  return (
    <div className="mx-auto flex max-w-xl flex-col items-center px-4 py-24 text-center sm:py-32">
      <p className="text-7xl font-bold tracking-tight text-brand-600 sm:text-8xl">404</p>
      <h1 className="mt-4 text-2xl font-semibold tracking-tight text-slate-900 sm:text-3xl">
        Page not found
      </h1>
      <p className="mt-3 text-slate-600">Please check the URL in the address bar and try again.</p>
      <div className="mt-10 flex flex-col gap-3 sm:flex-row">
        <ButtonLink to="/">Go home</ButtonLink>
        <ButtonLink to="/dashboard" variant="secondary">
          Go to Dashboard
        </ButtonLink>
      </div>
    </div>
  );
}
