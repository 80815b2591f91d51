import type { Organization } from "@promptmint/contracts";
import { Building2, Settings } from "lucide-react";
import { useEffect } from "react";
import { useLocation, useNavigate } from "react-router";
import { RoleBadge } from "../../components/organizations/role-badge";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { QueryStates } from "../../components/ui/query-states";
import { useActingOrganization, useSwitchAccount } from "../../lib/acting-account";
import { useOrganizations } from "../../lib/organizations-query";
import { CreateOrganizationForm } from "./create-organization-form";

/** /organizations: the organizations you belong to, acting for one, and creating one. */
export function OrganizationsPage() {
  const organizations = useOrganizations();
  const navigate = useNavigate();
  const { hash } = useLocation();

  // The switcher's "Create organization" lands on the form, ready to type.
  useEffect(() => {
    if (hash === "#create") document.getElementById("new-organization-name")?.focus();
  }, [hash]);

  return (
    <PageContainer className="max-w-5xl">
      <PageHeader
        title="Organizations"
        description="Buy and sell as a team: act for an organization to use its wallet, keys and apps with your role."
      />
      <div className="space-y-6">
        <QueryStates query={organizations} loading="Loading organizations...">
          {(list) =>
            list.length === 0 ? (
              <EmptyState
                icon={Building2}
                title="No organizations yet"
                description="Create one below, or accept an invitation someone sent you."
              />
            ) : (
              <OrganizationList organizations={list} />
            )
          }
        </QueryStates>
        <CreateOrganizationForm onCreated={(organization) => navigate(`/organizations/${organization.id}`)} />
      </div>
    </PageContainer>
  );
}

function OrganizationList({ organizations }: { organizations: Organization[] }) {
  const acting = useActingOrganization();
  const switchAccount = useSwitchAccount();
  return (
    <Card>
      <ul className="divide-y divide-slate-100" aria-label="Your organizations">
        {organizations.map((organization) => {
          const isActing = acting?.id === organization.id;
          return (
            <li key={organization.id} className="flex flex-wrap items-center gap-3 px-5 py-4">
              <Building2 className="size-5 shrink-0 text-slate-400" aria-hidden="true" />
              <div className="min-w-0 flex-1">
                <p className="flex flex-wrap items-center gap-2 font-medium text-slate-900">
                  <span className="truncate">{organization.name}</span>
                  <RoleBadge role={organization.role} />
                </p>
                <p className="text-sm text-slate-500">
                  {organization.member_count === 1 ? "1 member" : `${organization.member_count} members`}
                </p>
              </div>
              <div className="flex w-full gap-2 sm:w-auto">
                {isActing ? (
                  <Button
                    variant="secondary"
                    size="sm"
                    className="flex-1 sm:flex-none"
                    onClick={() => switchAccount(null)}
                  >
                    Act as yourself
                  </Button>
                ) : (
                  <Button
                    size="sm"
                    className="flex-1 sm:flex-none"
                    aria-label={`Act as ${organization.name}`}
                    onClick={() =>
                      switchAccount({ id: organization.id, name: organization.name, role: organization.role })
                    }
                  >
                    Act as
                  </Button>
                )}
                <ButtonLink
                  to={`/organizations/${organization.id}`}
                  variant="secondary"
                  size="sm"
                  className="flex-1 sm:flex-none"
                  aria-label={`Manage ${organization.name}`}
                >
                  <Settings className="size-4" aria-hidden="true" />
                  Manage
                </ButtonLink>
              </div>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
