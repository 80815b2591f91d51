import type { Organization } from "@promptmint/contracts";
import { Building2 } from "lucide-react";
import { useParams, useSearchParams } from "react-router";
import { RoleBadge } from "../../components/organizations/role-badge";
import { Button } from "../../components/ui/button";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { SectionTabsList, Tabs, TabsContent } from "../../components/ui/tabs";
import { useActingOrganization, useSwitchAccount } from "../../lib/acting-account";
import { getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { accountMay } from "../../lib/organization-capabilities";
import { useOrganization } from "./api/organization";
import { AuditSection } from "./audit-section";
import { InvitationsSection } from "./invitations-section";
import { MembersSection } from "./members-section";
import { SettingsSection } from "./settings-section";
import { UsageSection } from "./usage-section";

/** The sections a role sees: managers all of them, others what their role may read. */
function sectionsFor(organization: Organization): Record<string, string> {
  const manage = accountMay(organization.role, "manage");
  return {
    members: "Members",
    ...(manage && { invitations: "Invitations" }),
    ...(accountMay(organization.role, "read_billing") && { usage: "Usage" }),
    settings: "Settings",
    ...(manage && { audit: "Audit log" }),
  };
}

/** /organizations/:id: members, invitations, usage, settings and audit log of one organization. */
export function OrganizationPage() {
  const { id = "" } = useParams();
  const organization = useOrganization(id);

  if (organization.isPending) return <LoadingState label="Loading organization..." />;
  if (isNotFoundError(organization.error))
    return (
      <PageContainer>
        <NotFoundState
          title="Organization not found"
          description="It does not exist, or you are not one of its members."
          backTo="/organizations"
          backLabel="Back to organizations"
          icon={Building2}
        />
      </PageContainer>
    );
  if (!organization.data)
    return (
      <PageContainer>
        <ErrorBox message={getErrorMessage(organization.error)} />
      </PageContainer>
    );
  return <OrganizationSections organization={organization.data} />;
}

function OrganizationSections({ organization }: { organization: Organization }) {
  const acting = useActingOrganization();
  const switchAccount = useSwitchAccount();
  const [search, setSearch] = useSearchParams();
  const sections = sectionsFor(organization);
  const requested = search.get("tab") ?? "";
  const tab = requested in sections ? requested : "members";

  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title={organization.name}
        eyebrow="Organization"
        description={
          <span className="flex flex-wrap items-center gap-2">
            Your role: <RoleBadge role={organization.role} />
          </span>
        }
        actions={
          acting?.id === organization.id ? (
            <Button variant="secondary" onClick={() => switchAccount(null)}>
              Act as yourself
            </Button>
          ) : (
            <Button
              onClick={() =>
                switchAccount({ id: organization.id, name: organization.name, role: organization.role })
              }
            >
              Act as {organization.name}
            </Button>
          )
        }
      />
      <Tabs
        value={tab}
        onValueChange={(next) => setSearch(next === "members" ? {} : { tab: next }, { replace: true })}
      >
        <SectionTabsList label="Organization sections" sections={sections} />
        <TabsContent value="members">
          <MembersSection organization={organization} />
        </TabsContent>
        {"invitations" in sections && (
          <TabsContent value="invitations">
            <InvitationsSection organization={organization} />
          </TabsContent>
        )}
        {"usage" in sections && (
          <TabsContent value="usage">
            <UsageSection organization={organization} />
          </TabsContent>
        )}
        <TabsContent value="settings">
          <SettingsSection organization={organization} />
        </TabsContent>
        {"audit" in sections && (
          <TabsContent value="audit">
            <AuditSection organization={organization} />
          </TabsContent>
        )}
      </Tabs>
    </PageContainer>
  );
}
