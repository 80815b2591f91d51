import { BarChart3 } from "lucide-react";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /analytics */
export function GlobalAnalyticsPage() {
  return (
    <PageContainer>
      <PageHeader
        title="Global Analytics"
        description="Comprehensive analytics and insights across all your applications"
      />
      <ComingSoon
        icon={BarChart3}
        description="Invocations, success rates, response times and token usage."
      />
    </PageContainer>
  );
}
