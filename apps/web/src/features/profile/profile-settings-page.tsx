import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
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
      {profile.isPending ? (
        <LoadingState label="Loading profile..." />
      ) : profile.isError ? (
        <ErrorBox message="Failed to fetch profile" />
      ) : (
        <div className="grid gap-6 lg:grid-cols-3">
          <Card className="lg:col-span-2">
            <CardHeader
              title="Personal Information"
              description="Your name and username across Promptmint."
            />
            <CardBody>
              <ProfileForm profile={profile.data} />
            </CardBody>
          </Card>
          <div>
            <AccountInformation profile={profile.data} />
          </div>
          <div className="lg:col-span-3">
            <ModelKeysSection />
          </div>
        </div>
      )}
    </PageContainer>
  );
}
