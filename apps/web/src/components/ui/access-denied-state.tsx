import { ShieldAlert } from "lucide-react";
import { NotFoundState } from "./not-found-state";

/**
 * What a screen shows a signed-in person it is not for (403): one calm statement of why, in the
 * server's words, and a way back, instead of each section failing on its own. The same layout as
 * the not-found state, with its own icon.
 */
export function AccessDeniedState({
  reason,
  ...place
}: {
  title?: string;
  reason: string;
  backTo?: string;
  backLabel?: string;
}) {
  return (
    <NotFoundState
      title="You do not have access to this page"
      backTo="/dashboard"
      backLabel="Back to dashboard"
      {...place}
      icon={ShieldAlert}
      description={reason}
    />
  );
}
