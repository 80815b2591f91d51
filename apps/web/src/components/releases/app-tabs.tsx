import { BarChart3, FlaskConical, GitBranch, ListChecks, type LucideIcon, PencilLine } from "lucide-react";
import { Link } from "react-router";
import { cn } from "../../lib/cn";
import { type AppKind, type AppPage, appPagePath } from "../../lib/releases/app-ref";
import { EdgeFades, useHorizontalOverflow } from "../ui/scroll-area";

export type AppTab = AppPage;

/** The pages of one app, in the order a creator works: edit, release, test, measure. */
export function appTabs(kind: AppKind, slug: string) {
  const tab = (id: AppPage, label: string, icon: LucideIcon) => ({
    id,
    label,
    to: appPagePath(kind, slug, id),
    icon,
  });
  return [
    tab("editor", "Editor", PencilLine),
    tab("versions", "Versions", GitBranch),
    tab("experiments", "Experiments", FlaskConical),
    tab("evals", "Evals", ListChecks),
    tab("analytics", "Analytics", BarChart3),
  ];
}

/**
 * The navigation at the top of every per-app page, for prompt and workflow apps alike. Links, not tabs: each page has its own
 * address, so it can be bookmarked and opened in a new tab. The current one is marked
 * `aria-current="page"`. On a phone the strip scrolls sideways with a fade, like the section tabs.
 */
export function AppTabs({ kind, slug, current }: { kind: AppKind; slug: string; current: AppTab }) {
  const { ref, overflow } = useHorizontalOverflow<HTMLUListElement>();
  return (
    <nav
      aria-label={kind === "prompt" ? "Prompt app pages" : "Workflow app pages"}
      className="relative -mx-4 mb-6 sm:mx-0"
    >
      <ul
        ref={ref}
        className="flex gap-1 overflow-x-auto border-b border-slate-200 px-4 [scrollbar-width:none] sm:px-0"
      >
        {appTabs(kind, slug).map(({ id, label, to, icon: Icon }) => {
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

/** The prompt app's pages (kept for the prompt screens that name their kind implicitly). */
export function PromptAppTabs({ slug, current }: { slug: string; current: AppTab }) {
  return <AppTabs kind="prompt" slug={slug} current={current} />;
}
