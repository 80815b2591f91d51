import { BarChart3, FlaskConical, GitBranch, ListChecks, type LucideIcon, PencilLine } from "lucide-react";
import { Link } from "react-router";
import { EdgeFades, useHorizontalOverflow } from "../../components/ui/scroll-area";
import { cn } from "../../lib/cn";

export type PromptAppTab = "editor" | "versions" | "experiments" | "evals" | "analytics";

/** The pages of one prompt app, in the order a creator works: edit, release, test, measure. */
export function promptAppTabs(slug: string) {
  const app = encodeURIComponent(slug);
  return [
    { id: "editor", label: "Editor", to: `/prompts/${app}`, icon: PencilLine },
    { id: "versions", label: "Versions", to: `/prompts/${app}/versions`, icon: GitBranch },
    { id: "experiments", label: "Experiments", to: `/prompts/${app}/experiments`, icon: FlaskConical },
    { id: "evals", label: "Evals", to: `/prompts/${app}/evals`, icon: ListChecks },
    { id: "analytics", label: "Analytics", to: `/applications/${app}/analytics`, icon: BarChart3 },
  ] as const satisfies readonly { id: PromptAppTab; label: string; to: string; icon: LucideIcon }[];
}

/**
 * The navigation at the top of every per-app prompt page. Links, not tabs: each page has its own
 * address, so it can be bookmarked and opened in a new tab. The current one is marked
 * `aria-current="page"`. On a phone the strip scrolls sideways with a fade, like the section tabs.
 */
export function PromptAppTabs({ slug, current }: { slug: string; current: PromptAppTab }) {
  const { ref, overflow } = useHorizontalOverflow<HTMLUListElement>();
  return (
    <nav aria-label="Prompt app pages" className="relative -mx-4 mb-6 sm:mx-0">
      <ul
        ref={ref}
        className="flex gap-1 overflow-x-auto border-b border-slate-200 px-4 [scrollbar-width:none] sm:px-0"
      >
        {promptAppTabs(slug).map(({ id, label, to, icon: Icon }) => {
          const active = id === current;
          return (
            <li key={id} className="shrink-0">
              <Link
                to={to}
                aria-current={active ? "page" : undefined}
                className={cn(
                  "-mb-px inline-flex items-center gap-1.5 border-b-2 px-3 py-2.5 text-sm font-medium whitespace-nowrap transition-colors",
                  "focus-visible:outline-2 focus-visible:outline-offset-[-2px] focus-visible:outline-brand-600",
                  active
                    ? "border-brand-600 text-brand-700"
                    : "border-transparent text-slate-500 hover:text-slate-800",
                )}
              >
                <Icon className="size-4" aria-hidden="true" />
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
      <EdgeFades overflow={overflow} />
    </nav>
  );
}
