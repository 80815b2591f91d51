import { GitCompare, Rocket, Tag } from "lucide-react";
import { Button } from "../../components/ui/button";
import { cn } from "../../lib/cn";
import { formatDateTime, formatRelativeTime } from "../../lib/format";
import { type AppVersion, versionEngine } from "../../lib/releases/versions";
import { BUILT_IN_LABELS, LabelChip } from "./label-chip";

export function VersionRow({
  version,
  production,
  onPromote,
  onCompare,
  onAddLabel,
  onRemoveLabel,
}: {
  version: AppVersion;
  production: number;
  onPromote: () => void;
  onCompare: () => void;
  onAddLabel: () => void;
  onRemoveLabel: (name: string) => void;
}) {
  const isProduction = version.version === production;
  const labels = [...version.labels].sort(
    (a, b) => Number(b === "production") - Number(a === "production") || a.localeCompare(b),
  );
  return (
    <li
      aria-label={`Version ${version.version}`}
      className={cn("relative px-5 py-4", isProduction && "bg-green-50/60")}
    >
      {isProduction && <span className="absolute inset-y-0 left-0 w-1 bg-green-500" aria-hidden="true" />}
      <div className="flex items-start gap-3">
        <span
          className={cn(
            "mt-0.5 inline-flex h-7 min-w-10 shrink-0 items-center justify-center rounded-md px-2 font-mono text-sm font-semibold",
            isProduction ? "bg-green-600 text-white" : "bg-slate-100 text-slate-700",
          )}
        >
          v{version.version}
        </span>
        <div className="@container min-w-0 flex-1 space-y-1.5">
          <p
            className={cn(
              "text-sm break-words",
              version.changelog ? "font-medium text-slate-900" : "text-slate-500 italic",
            )}
          >
            {version.changelog || "No note"}
          </p>
          {labels.length > 0 && (
            <div className="flex flex-wrap gap-1.5">
              {labels.map((name) => (
                <LabelChip
                  key={name}
                  name={name}
                  onRemove={BUILT_IN_LABELS.has(name) ? undefined : () => onRemoveLabel(name)}
                />
              ))}
            </div>
          )}
          <p className="text-xs text-slate-500">
            {/* No author: the starter version the app was created with, or an account since deleted. */}
            {version.author_name && `${version.author_name} · `}
            <time dateTime={version.created_at} title={formatDateTime(version.created_at)}>
              {formatRelativeTime(version.created_at)}
            </time>{" "}
            · <span className="font-mono">{versionEngine(version)}</span>
          </p>
          {/* One line however narrow the row (a phone, or the timeline's column beside Compare): by
              the row's own width, "Promote" alone and the two lesser actions as their icons (their
              names stay, for screen readers and as tooltips). */}
          <div className="flex flex-wrap gap-1.5 pt-1">
            {!isProduction && (
              <Button size="sm" variant="secondary" onClick={onPromote} aria-label="Promote to production">
                <Rocket className="size-4" aria-hidden="true" />
                <span>
                  Promote<span className="sr-only @xs:not-sr-only"> to production</span>
                </span>
              </Button>
            )}
            <Button
              size="sm"
              variant="ghost"
              onClick={onCompare}
              aria-label={`Compare v${version.version}`}
              title={`Compare v${version.version}`}
            >
              <GitCompare className="size-4" aria-hidden="true" />
              <span className="sr-only @md:not-sr-only">Compare</span>
            </Button>
            <Button
              size="sm"
              variant="ghost"
              onClick={onAddLabel}
              aria-label={`Add a label to v${version.version}`}
              title={`Add a label to v${version.version}`}
            >
              <Tag className="size-4" aria-hidden="true" />
              <span className="sr-only @md:not-sr-only">Label</span>
            </Button>
          </div>
        </div>
      </div>
    </li>
  );
}
