import { CheckCircle2 } from "lucide-react";
import { ButtonLink } from "../../components/ui/button";
import { EmptyState } from "../../components/ui/empty-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /billing/success: where the payment provider sends the person back. */
export function BillingSuccessPage() {
  return (
    <PageContainer className="max-w-3xl">
      <PageHeader title="Payment Complete" description="Thank you. Your payment was received." />
      <EmptyState
        icon={CheckCircle2}
        title="You're all set"
        description="Your subscription or top-up is being applied to your account."
        action={<ButtonLink to="/dashboard">Go to Dashboard</ButtonLink>}
      />
    </PageContainer>
  );
}
