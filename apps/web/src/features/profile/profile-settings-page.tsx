import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { QueryStates } from "../../components/ui/query-states";
import { useProfile } from "../../lib/profile-query";
import { AccountInformation } from "./account-information";
import { ModelKeysSection } from "./model-keys-section";
import { ProfileForm } from "./profile-form";

export function ProfileSettingsPage() {
  const profile = useProfile();

  return (
    <PageContainer className="max-w-5xl">
      <PageHeader
        title="Profile Settings"
        description="Manage your personal information and how others see you."
      />
      <QueryStates query={profile} loading="Loading profile..." error="Failed to fetch profile">
        {(data) => (
          <div className="grid gap-6 lg:grid-cols-3">
            <Card className="lg:col-span-2">
              <CardHeader
                title="Personal Information"
                description="Your name and username across Promptmint."
              />
              <CardBody>
                <ProfileForm profile={data} />
              </CardBody>
            </Card>
            <div>
              <AccountInformation profile={data} />
            </div>
            <div className="lg:col-span-3">
              <ModelKeysSection />
            </div>
          </div>
        )}
      </QueryStates>
    </PageContainer>
  );
}
