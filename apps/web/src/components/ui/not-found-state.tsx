import { ArrowLeft, type LucideIcon, SearchX } from "lucide-react";
import { useDocumentTitle } from "../../lib/document-title";
import { ButtonLink } from "./button";
import { EmptyState } from "./empty-state";

/**
 * What a screen shows when the thing it is about does not exist, or is not the person's (404):
 * says so and leads back to the list it belongs to, so a stale link is never a dead end.
 */
export function NotFoundState({
  title,
  description = "It may have been deleted, or the link is wrong.",
  backTo,
  backLabel,
  icon = SearchX,
}: {
  title: string;
  description?: string;
  backTo: string;
  backLabel: string;
  icon?: LucideIcon;
}) {
  useDocumentTitle(title);
  return (
    <EmptyState
      icon={icon}
      title={title}
      description={description}
      action={
        <ButtonLink to={backTo} variant="secondary">
          <ArrowLeft className="size-4" aria-hidden="true" />
          {backLabel}
        </ButtonLink>
      }
    />
  );
}
