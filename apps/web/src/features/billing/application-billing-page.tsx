import { CreditCard } from "lucide-react";
import { useParams } from "react-router";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /applications/:appSlug/billing */
export function ApplicationBillingPage() {
  const { appSlug = "" } = useParams();

  return (
    <PageContainer>
      <PageHeader
        title="Billing & Subscriptions"
        description={
          <>
            Plans, subscriptions and payment methods for <span className="font-mono">{appSlug}</span>.
          </>
        }
      />
      <ComingSoon icon={CreditCard} description="Subscriptions, available plans and saved payment methods." />
    </PageContainer>
  );
}
