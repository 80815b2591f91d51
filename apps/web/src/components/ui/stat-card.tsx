import type { LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { Card } from "./card";
import { IconTile } from "./icon-tile";

/** A summary figure with its label (dashboard cards, analytics side panels). */
export function StatCard({
  label,
  value,
  icon,
  hint,
}: {
  label: string;
  value: ReactNode;
  icon?: LucideIcon;
  /** One short line under the value that says what it means. */
  hint?: string;
}) {
  return (
    <Card className="flex items-start gap-4 px-5 py-4">
      {icon && <IconTile icon={icon} className="shrink-0" />}
      <dl className="min-w-0">
        <dt className="truncate text-sm font-medium text-slate-500">{label}</dt>
        <dd className="mt-0.5 text-2xl font-semibold tracking-tight text-slate-900 tabular-nums">{value}</dd>
        {hint && <dd className="mt-0.5 text-xs text-slate-500">{hint}</dd>}
      </dl>
    </Card>
  );
}
