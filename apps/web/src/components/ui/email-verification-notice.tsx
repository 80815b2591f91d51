import { VerificationEmailResultSchema } from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import { apiRequest, getErrorMessage } from "../../lib/api-client";
import { useProfile } from "../../lib/profile-query";
import { Alert } from "./alert";
import { Button } from "./button";

/**
 * A quiet note where a verified email address is needed (payouts, operator access): it names the
 * address, says why, and mails a new link on request. Nothing once the address is verified.
 */
export function EmailVerificationNotice({ reason, className }: { reason: string; className?: string }) {
  const profile = useProfile();
  const resend = useMutation({
    mutationFn: () =>
      apiRequest("/auth/verification-email/", { method: "POST", schema: VerificationEmailResultSchema }),
  });
  const user = profile.data?.user;
  if (!user || user.email_verified || resend.data?.email_verified) return null;
  return (
    <Alert tone="warning" role="note" title="Verify your email address" className={className}>
      <p>
        {reason} We mailed a link to <strong>{user.email}</strong>: open it to verify the address.
      </p>
      <div className="flex flex-wrap items-center gap-3 pt-1">
        <Button variant="secondary" onClick={() => resend.mutate()} disabled={resend.isPending}>
          {resend.isPending ? "Sending..." : "Resend verification email"}
        </Button>
        {resend.isSuccess && resend.data.sent && (
          <span role="status">A new link is on its way to {resend.data.email}.</span>
        )}
        {resend.isError && <span role="alert">{getErrorMessage(resend.error)}</span>}
      </div>
    </Alert>
  );
}
