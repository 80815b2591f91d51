import { Rocket, X } from "lucide-react";
import { Badge } from "../../components/ui/badge";
import { cn } from "../../lib/cn";

/** Labels the server moves itself: `production` by a release, `latest` by every save. */
export const BUILT_IN_LABELS = new Set(["production", "latest"]);

export function LabelChip({ name, onRemove }: { name: string; onRemove?: () => void }) {
  const tone = name === "production" ? "green" : name === "latest" ? "blue" : "brand";
  return (
    <Badge tone={tone} className={cn("gap-1", name === "production" && "font-semibold")}>
      {name === "production" && <Rocket className="size-3" aria-hidden="true" />}
      {name}
      {onRemove && (
        <button
          type="button"
          onClick={onRemove}
          aria-label={`Remove label ${name}`}
          className="-mr-1 rounded p-0.5 hover:bg-brand-100 focus-visible:outline-2 focus-visible:outline-brand-600"
        >
          <X className="size-3" aria-hidden="true" />
        </button>
      )}
    </Badge>
  );
}
