import { LineChart } from "lucide-react";
import { useParams } from "react-router";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /applications/:slug/analytics */
export function ApplicationAnalyticsPage() {
  const { slug = "" } = useParams();

  return (
    <PageContainer>
      <PageHeader
        title={`${slug} Analytics`}
        description="Usage, performance and revenue of this application."
      />
      <ComingSoon
        icon={LineChart}
        description="Usage over time, performance, revenue and recent invocations."
      />
    </PageContainer>
  );
}
