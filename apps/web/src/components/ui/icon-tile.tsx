import type { LucideIcon } from "lucide-react";
import { cn } from "../../lib/cn";

/** A feature's icon on its brand-tinted square (landing features, first steps, stat cards). */
export function IconTile({ icon: Icon, className }: { icon: LucideIcon; className?: string }) {
  return (
    <span
      className={cn(
        "flex size-10 items-center justify-center rounded-lg bg-brand-50 text-brand-600",
        className,
      )}
    >
      <Icon className="size-5" aria-hidden="true" />
    </span>
  );
}
