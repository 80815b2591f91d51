import { Compass, Wallet } from "lucide-react";
import { SubscriptionList } from "../../components/billing/subscription-list";
import { ButtonLink } from "../../components/ui/button";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { QueryStates } from "../../components/ui/query-states";
import { useAccountSubscriptions } from "../../lib/billing/list-account-subscriptions";

/**
 * /subscriptions: every plan the signed-in person subscribes to, across apps: its period, the
 * included calls used, the next renewal (or when it ends), and Cancel or Resume (issue 42).
 */
export function MySubscriptionsPage() {
  const subscriptions = useAccountSubscriptions();
  return (
    <PageContainer className="max-w-4xl">
      <PageHeader
        title="My Subscriptions"
        description="Plans you subscribe to, in every app. Calls beyond a plan's included calls are paid from your wallet."
        actions={
          <>
            <ButtonLink to="/explore" variant="secondary" size="sm">
              <Compass className="size-4" aria-hidden="true" />
              Explore
            </ButtonLink>
            <ButtonLink to="/wallet" variant="secondary" size="sm">
              <Wallet className="size-4" aria-hidden="true" />
              Wallet
            </ButtonLink>
          </>
        }
      />
      <QueryStates
        query={subscriptions}
        loading="Loading subscriptions..."
        error="Failed to load subscriptions"
      >
        {(data) => (
          <SubscriptionList
            subscriptions={data}
            title="Subscriptions"
            description="Cancel stops the renewal; the paid period runs to its end. Resume undoes a cancel until then."
            empty="You have no subscriptions yet. Subscribe to a plan from an app's page in Explore; until then, calls are paid from your wallet."
          />
        )}
      </QueryStates>
    </PageContainer>
  );
}
