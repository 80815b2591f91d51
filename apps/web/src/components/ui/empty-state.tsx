import type { LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { cn } from "../../lib/cn";

export function EmptyState({
  icon: Icon,
  title,
  description,
  action,
  className,
  framed = true,
}: {
  icon: LucideIcon;
  title: string;
  description?: ReactNode;
  action?: ReactNode;
  className?: string;
  /** False inside a card that already has its title: no dashed frame, and a lower heading. */
  framed?: boolean;
}) {
  const Heading = framed ? "h2" : "h3";
  return (
    <div
      className={cn(
        "flex flex-col items-center text-center",
        framed ? "rounded-xl border border-dashed border-slate-300 bg-white px-6 py-14" : "px-6 py-12",
        className,
      )}
    >
      <div className="flex size-12 items-center justify-center rounded-full bg-brand-50 text-brand-600">
        <Icon className="size-6" aria-hidden="true" />
      </div>
      <Heading className="mt-4 text-base font-semibold text-slate-900">{title}</Heading>
      {description && <p className="mt-1 max-w-sm text-sm text-slate-500">{description}</p>}
      {action && <div className="mt-6">{action}</div>}
    </div>
  );
}
