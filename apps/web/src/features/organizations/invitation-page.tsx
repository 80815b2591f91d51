import { type InvitationPreview, ORGANIZATION_ROLE_TEXT } from "@promptmint/contracts";
import { Building2, MailX } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { useLocation, useNavigate, useParams } from "react-router";
import { RoleBadge } from "../../components/organizations/role-badge";
import { Alert } from "../../components/ui/alert";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { formatDate } from "../../lib/format";
import { useProfile } from "../../lib/profile-query";
import { useAcceptInvitation, useInvitationPreview } from "./api/invitations";

const STATUS_TEXT: Record<Exclude<InvitationPreview["status"], "pending">, string> = {
  accepted: "This invitation has already been accepted.",
  revoked: "This invitation was withdrawn. Ask for a new one.",
  expired: "This invitation has expired. Ask for a new one.",
};

/** /invitations/:token: what an emailed link offers, and accepting it (signed out: sign in first, then back here). */
export function InvitationPage() {
  const auth = useAuth();
  return (
    <PageContainer className="max-w-2xl">
      <PageHeader title="Invitation" description="An invitation to act for an organization with a role." />
      {auth.isLoading ? (
        <LoadingState label="Checking authentication..." />
      ) : auth.isAuthenticated ? (
        <SignedInInvitation />
      ) : (
        <SignedOutInvitation />
      )}
    </PageContainer>
  );
}

/** Sign-in and sign-up bring the person back to this link (lib/intended-path.ts). */
function SignedOutInvitation() {
  const location = useLocation();
  return (
    <Card>
      <CardBody className="space-y-4">
        <p className="text-sm text-slate-700">
          Sign in with the address the invitation was sent to, or create an account with it, to see and accept
          it.
        </p>
        <div className="flex flex-col gap-2 sm:flex-row">
          <ButtonLink to="/login" state={{ from: location }}>
            Sign in
          </ButtonLink>
          <ButtonLink to="/register" state={{ from: location }} variant="secondary">
            Create an account
          </ButtonLink>
        </div>
      </CardBody>
    </Card>
  );
}

function SignedInInvitation() {
  const { token = "" } = useParams();
  const preview = useInvitationPreview(token);
  if (preview.isPending) return <LoadingState label="Loading the invitation..." />;
  if (isNotFoundError(preview.error))
    return (
      <NotFoundState
        title="Invitation not found"
        description="The link is wrong or incomplete: open it again from the email."
        backTo="/organizations"
        backLabel="Your organizations"
        icon={MailX}
      />
    );
  if (!preview.data) return <ErrorBox message={getErrorMessage(preview.error)} />;
  return <InvitationOffer token={token} invitation={preview.data} />;
}

function InvitationOffer({ token, invitation }: { token: string; invitation: InvitationPreview }) {
  const accept = useAcceptInvitation();
  const navigate = useNavigate();
  const profile = useProfile();
  const myEmail = profile.data?.user.email;

  const join = () =>
    accept.mutate(token, {
      onSuccess: () => {
        void import("sonner").then(({ toast }) =>
          toast.success(`You joined ${invitation.organization_name}.`),
        );
        void navigate(`/organizations/${invitation.organization_id}`);
      },
    });

  return (
    <Card>
      <CardBody className="space-y-5">
        <div className="flex items-start gap-3">
          <Building2 className="mt-1 size-6 shrink-0 text-brand-600" aria-hidden="true" />
          <div className="min-w-0 space-y-1">
            <h2 className="text-lg font-semibold text-slate-900">{invitation.organization_name}</h2>
            <p className="flex flex-wrap items-center gap-2 text-sm text-slate-700">
              Role: <RoleBadge role={invitation.role} />
              <span className="text-slate-500">{ORGANIZATION_ROLE_TEXT[invitation.role]}</span>
            </p>
            <p className="text-sm text-slate-500">
              {invitation.invited_by ? `Invited by ${invitation.invited_by}. ` : ""}
              For {invitation.email}; expires {formatDate(invitation.expires_at)}.
            </p>
          </div>
        </div>
        {invitation.status !== "pending" ? (
          <Alert tone="warning">{STATUS_TEXT[invitation.status]}</Alert>
        ) : !invitation.email_matches ? (
          <Alert tone="warning" title="This invitation is for another address">
            It was sent to {invitation.email}
            {myEmail ? `, and you are signed in as ${myEmail}` : ""}. Sign in with {invitation.email} to
            accept it.
          </Alert>
        ) : (
          <>
            {accept.isError && <Alert tone="error">{getErrorMessage(accept.error)}</Alert>}
            <Button busy={accept.isPending} onClick={join} className="w-full sm:w-auto">
              {accept.isPending ? "Joining..." : `Join ${invitation.organization_name}`}
            </Button>
          </>
        )}
      </CardBody>
    </Card>
  );
}
