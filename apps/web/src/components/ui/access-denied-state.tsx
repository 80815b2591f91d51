import { ArrowLeft, ShieldAlert } from "lucide-react";
import { ButtonLink } from "./button";
import { EmptyState } from "./empty-state";

/**
 * What a screen shows a signed-in person it is not for (403): one calm statement of why, in the
 * server's words, and a way back, instead of each section failing on its own.
 */
export function AccessDeniedState({
  title = "You do not have access to this page",
  reason,
  backTo = "/dashboard",
  backLabel = "Back to dashboard",
}: {
  title?: string;
  reason: string;
  backTo?: string;
  backLabel?: string;
}) {
  return (
    <EmptyState
      icon={ShieldAlert}
      title={title}
      description={reason}
      action={
        <ButtonLink to={backTo} variant="secondary">
          <ArrowLeft className="size-4" aria-hidden="true" />
          {backLabel}
        </ButtonLink>
      }
    />
  );
}
