import { FlaskConical } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { useSearchParams } from "react-router";
import { Alert } from "../../components/ui/alert";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /api-test, public; `?app={slug}` preselects an application. */
export function ApiTestPage() {
  const { isAuthenticated } = useAuth();
  const [searchParams] = useSearchParams();
  const app = searchParams.get("app");

  return (
    <PageContainer className="max-w-5xl">
      <PageHeader
        title="API Test Console"
        description="Call the completion and chat endpoints of an application and inspect the answer."
      />
      {!isAuthenticated && (
        <Alert tone="warning" role="status" className="mb-6">
          Authentication Required: Please log in to access your applications and test APIs.
        </Alert>
      )}
      <ComingSoon
        icon={FlaskConical}
        description={
          app ? (
            <>
              Testing <span className="font-mono">{app}</span> is on its way.
            </>
          ) : (
            "The completion and chat test panels are on their way."
          )
        }
      />
    </PageContainer>
  );
}
