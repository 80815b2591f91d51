import { ArrowLeft } from "lucide-react";
import { ButtonLink } from "../../components/ui/button";

/** While the app cannot be shown: its slug as the title, and the way back. */
export function WorkflowFallbackHeader({ slug }: { slug: string }) {
  return (
    <header className="mb-6 flex flex-col gap-4 sm:flex-row sm:items-start sm:justify-between">
      <div className="min-w-0">
        <p className="mb-2 text-sm font-medium text-brand-600">Workflow application</p>
        <h1 className="text-2xl font-semibold tracking-tight break-all text-slate-900 sm:text-3xl">{slug}</h1>
      </div>
      <ButtonLink to="/workflows" variant="secondary" size="sm">
        <ArrowLeft className="size-4" aria-hidden="true" />
        Back to List
      </ButtonLink>
    </header>
  );
}
