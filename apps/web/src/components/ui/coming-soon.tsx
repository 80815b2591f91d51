import { Hammer, type LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { EmptyState } from "./empty-state";

/** Holds a screen's place until its content ships. */
export function ComingSoon({
  icon = Hammer,
  title = "Coming soon",
  description,
  action,
}: {
  icon?: LucideIcon;
  title?: string;
  description: ReactNode;
  action?: ReactNode;
}) {
  return <EmptyState icon={icon} title={title} description={description} action={action} />;
}
