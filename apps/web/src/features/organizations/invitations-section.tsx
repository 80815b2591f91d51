import {
  type Invitation,
  ORGANIZATION_ROLE_TEXT,
  type Organization,
  type OrganizationRole,
} from "@promptmint/contracts";
import { MailPlus, Send } from "lucide-react";
import { type FormEvent, useState } from "react";
import { RoleBadge } from "../../components/organizations/role-badge";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatDate } from "../../lib/format";
import { ORGANIZATION_ROLES } from "../../lib/organization-capabilities";
import { useCreateInvitation, useInvitations, useRevokeInvitation } from "./api/invitations";

const ROLE_OPTIONS = (myRole: OrganizationRole) =>
  ORGANIZATION_ROLES.filter((role) => myRole === "owner" || role !== "owner").map((role) => ({
    value: role,
    label: `${role[0]?.toUpperCase()}${role.slice(1)}: ${ORGANIZATION_ROLE_TEXT[role]}`,
  }));

/** Inviting people by address with a role, and the invitations still waiting for an answer. */
export function InvitationsSection({ organization }: { organization: Organization }) {
  return (
    <div className="space-y-6">
      <InviteForm organization={organization} />
      <PendingInvitations organization={organization} />
    </div>
  );
}

function InviteForm({ organization }: { organization: Organization }) {
  const create = useCreateInvitation(organization.id);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<OrganizationRole>("developer");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [sentTo, setSentTo] = useState<string>();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSentTo(undefined);
    if (!/^\S+@\S+\.\S+$/.test(email.trim())) return setErrors({ email: "Email must be an email address" });
    setErrors({});
    create.mutate(
      { organizationId: organization.id, invitation: { email: email.trim(), role } },
      {
        onSuccess: (invitation) => {
          setSentTo(invitation.email);
          setEmail("");
        },
        onError: (failure) => {
          if (failure instanceof ApiClientError && failure.fields) setErrors(failure.fields);
        },
      },
    );
  };

  return (
    <Card>
      <CardHeader
        title="Invite a member"
        description="They get an email with a link; it works for that address only."
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4" aria-label="Invite a member">
          {sentTo && <Alert tone="success">Invitation sent to {sentTo}.</Alert>}
          {create.isError && Object.keys(errors).length === 0 && (
            <Alert tone="error">{getErrorMessage(create.error)}</Alert>
          )}
          <div className="grid gap-4 sm:grid-cols-2">
            <TextField
              label="Email"
              type="email"
              autoComplete="off"
              value={email}
              error={errors.email}
              onChange={(event) => {
                setEmail(event.target.value);
                setErrors({});
              }}
            />
            <SelectField
              label="Role"
              options={ROLE_OPTIONS(organization.role)}
              value={role}
              error={errors.role}
              onChange={(event) => setRole(event.target.value as OrganizationRole)}
            />
          </div>
          <div className="flex justify-end border-t border-slate-100 pt-4">
            <Button type="submit" busy={create.isPending} className="w-full sm:w-auto">
              {!create.isPending && <Send className="size-4" aria-hidden="true" />}
              {create.isPending ? "Sending..." : "Send invitation"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}

function PendingInvitations({ organization }: { organization: Organization }) {
  const invitations = useInvitations(organization.id);
  const revoke = useRevokeInvitation(organization.id);
  return (
    <Card>
      <CardHeader title="Pending invitations" />
      {revoke.isError && (
        <Alert tone="error" className="mx-5 mt-4">
          {getErrorMessage(revoke.error)}
        </Alert>
      )}
      <QueryStates query={invitations} loading="Loading invitations...">
        {(list) => {
          const pending = list.filter((invitation) => invitation.status === "pending");
          if (pending.length === 0)
            return <EmptyState icon={MailPlus} framed={false} title="No pending invitations" />;
          return (
            <ul className="divide-y divide-slate-100" aria-label="Pending invitations">
              {pending.map((invitation) => (
                <PendingInvitation
                  key={invitation.id}
                  invitation={invitation}
                  revoking={revoke.isPending && revoke.variables?.invitationId === invitation.id}
                  onRevoke={() =>
                    revoke.mutate({ organizationId: organization.id, invitationId: invitation.id })
                  }
                />
              ))}
            </ul>
          );
        }}
      </QueryStates>
    </Card>
  );
}

function PendingInvitation({
  invitation,
  revoking,
  onRevoke,
}: {
  invitation: Invitation;
  revoking: boolean;
  onRevoke: () => void;
}) {
  return (
    <li className="flex flex-wrap items-center gap-3 px-5 py-3">
      <div className="min-w-0 flex-1">
        <p className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-900">
          <span className="truncate">{invitation.email}</span>
          <RoleBadge role={invitation.role} />
        </p>
        <p className="text-xs text-slate-500">
          {invitation.invited_by ? `Invited by ${invitation.invited_by} · ` : ""}
          expires {formatDate(invitation.expires_at)}
        </p>
      </div>
      <Button
        variant="secondary"
        size="sm"
        busy={revoking}
        onClick={onRevoke}
        aria-label={`Revoke the invitation of ${invitation.email}`}
      >
        Revoke
      </Button>
    </li>
  );
}
