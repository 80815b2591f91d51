import type { Package } from "@promptmint/contracts";
import { Wallet } from "lucide-react";
import { useState } from "react";
import { useParams } from "react-router";
import { CheckoutDialog } from "../../components/billing/checkout-dialog";
import { SubscriptionList } from "../../components/billing/subscription-list";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { ButtonLink } from "../../components/ui/button";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { PaymentGatewayNotice } from "../../components/ui/payment-gateway-notice";
import { LoadingState } from "../../components/ui/spinner";
import { useApplication, useApplications } from "../../lib/applications-query";
import { usePaymentMethods } from "../../lib/billing/list-payment-methods";
import { useSubscriptions } from "../../lib/billing/list-subscriptions";
import { useAppInfo } from "./api/get-app-info";
import { usePackages } from "./api/list-packages";
import { PaymentMethodList } from "./payment-method-list";
import { PlanGrid } from "./plan-grid";
import { PlanManagement } from "./plan-management";
import { PromotionCodesCard } from "./promotion-codes-card";
import { TrialOfferCard } from "./trial-offer-card";

/** /applications/:appSlug/billing: plans, the caller's subscriptions and saved cards (SPEC §2). */
export function ApplicationBillingPage() {
  const { appSlug = "" } = useParams();
  const info = useAppInfo(appSlug);
  // Only the owner can read the application itself: its success is what shows plan management.
  // Someone else's app is not asked for (its 404 would only fill the console, issue 42).
  const ownApplications = useApplications();
  const owns = ownApplications.data?.some((own) => own.slug === appSlug) ?? false;
  const ownApplication = useApplication(appSlug, { enabled: owns });
  const packages = usePackages(appSlug);
  const subscriptions = useSubscriptions(appSlug);
  const paymentMethods = usePaymentMethods(appSlug);
  const [checkoutPlan, setCheckoutPlan] = useState<Package | null>(null);

  const loading =
    packages.isPending ||
    subscriptions.isPending ||
    paymentMethods.isPending ||
    ownApplications.isPending ||
    (owns && ownApplication.isPending);
  const failed = packages.isError || subscriptions.isError || paymentMethods.isError;
  const name = info.data?.name ?? ownApplication.data?.name;

  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title="Billing & Subscriptions"
        eyebrow={name}
        description={
          <>
            Plans, subscriptions and payment methods for <span className="font-mono">{appSlug}</span>.
          </>
        }
        actions={
          <>
            <ButtonLink to="/wallet" variant="secondary" size="sm">
              <Wallet className="size-4" aria-hidden="true" />
              Wallet
            </ButtonLink>
            <ApiReferenceLink />
          </>
        }
      />

      {loading ? (
        <LoadingState label="Loading billing..." />
      ) : failed ? (
        <ErrorBox message="Failed to load billing data" />
      ) : (
        <div className="space-y-8">
          <PaymentGatewayNotice />
          {ownApplication.isSuccess && <PlanManagement appSlug={appSlug} plans={packages.data} />}
          {ownApplication.isSuccess && (
            <div className="grid items-start gap-6 lg:grid-cols-2">
              <TrialOfferCard appSlug={appSlug} />
              <PromotionCodesCard appSlug={appSlug} />
            </div>
          )}
          {/* The owner's own calls are free: subscriptions are for callers (their preview is the grid). */}
          {!(ownApplication.isSuccess && subscriptions.data.length === 0) && (
            <SubscriptionList subscriptions={subscriptions.data} />
          )}
          <PlanGrid
            plans={packages.data}
            subscriptions={subscriptions.data}
            ownerPreview={ownApplication.isSuccess}
            onSubscribe={setCheckoutPlan}
          />
          <PaymentMethodList appSlug={appSlug} paymentMethods={paymentMethods.data} />
          <CheckoutDialog appSlug={appSlug} plan={checkoutPlan} onClose={() => setCheckoutPlan(null)} />
        </div>
      )}
    </PageContainer>
  );
}
