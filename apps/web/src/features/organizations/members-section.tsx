import type { Member, Organization } from "@promptmint/contracts";
import { Users } from "lucide-react";
import { useState } from "react";
import { useNavigate } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Card, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { readActingOrganization, useSwitchAccount } from "../../lib/acting-account";
import { getErrorMessage } from "../../lib/api-client";
import { useProfile } from "../../lib/profile-query";
import { useMembers, useRemoveMember } from "./api/members";
import { MemberRow } from "./member-row";

/** The members: their role and monthly budget (managers change them), removing one, leaving. */
export function MembersSection({ organization }: { organization: Organization }) {
  const members = useMembers(organization.id);
  const profile = useProfile();
  const remove = useRemoveMember();
  const switchAccount = useSwitchAccount();
  const navigate = useNavigate();
  const [removing, setRemoving] = useState<Member | null>(null);
  const myId = profile.data?.user.id;
  const leaving = removing !== null && removing.user_id === myId;

  const confirmRemove = () => {
    if (!removing) return;
    remove.mutate(
      { organizationId: organization.id, userId: removing.user_id },
      {
        onSuccess: () => {
          setRemoving(null);
          if (!leaving) return;
          // Leaving the organization acted for: back to your own account, and to your organizations.
          if (readActingOrganization()?.id === organization.id) switchAccount(null);
          void navigate("/organizations");
        },
      },
    );
  };

  return (
    <Card>
      <CardHeader
        title="Members"
        description="Each member acts for the organization with their role; a budget caps what their calls spend of its money each UTC month."
      />
      <QueryStates query={members} loading="Loading members...">
        {(list) =>
          list.length === 0 ? (
            <EmptyState icon={Users} framed={false} title="No members" />
          ) : (
            <div>
              <div className="hidden grid-cols-[minmax(0,1fr)_9rem_16rem_6rem] gap-4 border-b border-slate-100 bg-slate-50 px-5 py-2 text-xs font-semibold tracking-wide text-slate-500 uppercase lg:grid">
                <span>Member</span>
                <span>Role</span>
                <span>Monthly budget</span>
                <span className="sr-only">Actions</span>
              </div>
              <ul className="divide-y divide-slate-100" aria-label="Members">
                {list.map((member) => (
                  <MemberRow
                    key={member.user_id}
                    organization={organization}
                    member={member}
                    isMe={member.user_id === myId}
                    onRemove={() => setRemoving(member)}
                  />
                ))}
              </ul>
            </div>
          )
        }
      </QueryStates>
      <ConfirmDialog
        open={removing !== null}
        onOpenChange={(open) => {
          if (!open) {
            setRemoving(null);
            remove.reset();
          }
        }}
        title={leaving ? `Leave ${organization.name}?` : `Remove ${removing?.name ?? "member"}?`}
        description={
          leaving
            ? "You will no longer act for it; the API keys you made for it stop working."
            : "They will no longer act for the organization; the API keys they made for it stop working."
        }
        confirmLabel={leaving ? "Leave" : "Remove"}
        busyLabel={leaving ? "Leaving..." : "Removing..."}
        busy={remove.isPending}
        onConfirm={confirmRemove}
      >
        {remove.isError && (
          <Alert tone="error" className="mt-4">
            {getErrorMessage(remove.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}
