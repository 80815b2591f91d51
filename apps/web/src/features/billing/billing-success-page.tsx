import { CheckCircle2, Info, XCircle } from "lucide-react";
import { useSearchParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { PAYMENT_NOT_COMPLETED } from "../../lib/sandbox-payments";

/** Only a path on this site (not `//host` or a full URL) may be the way back; otherwise the wallet. */
export function safeReturnPath(value: string | null): string {
  if (value?.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\")) return value;
  return "/wallet";
}

/**
 * /billing/success: where a redirect-based payment (e.g. a card needing 3-D Secure) comes back,
 * with `payment_intent` and `redirect_status` in the query. Nothing is fetched: the balance or
 * subscription pages show the result once the payment provider has told the server.
 */
export function BillingSuccessPage() {
  const [params] = useSearchParams();
  if (!params.has("redirect_status")) return <NothingToConfirm />;
  const succeeded = params.get("redirect_status") === "succeeded";
  const paymentIntent = params.get("payment_intent");
  const returnTo = safeReturnPath(params.get("return_to"));
  const Icon = succeeded ? CheckCircle2 : XCircle;

  return (
    <PageContainer className="max-w-3xl">
      <PageHeader
        title={succeeded ? "Payment Complete" : "Payment Not Completed"}
        description={succeeded ? "Thank you. Your payment was received." : "Your payment did not go through."}
      />
      <Card className="flex flex-col items-center px-6 py-12 text-center">
        <div
          className={
            succeeded
              ? "flex size-12 items-center justify-center rounded-full bg-green-50 text-green-600"
              : "flex size-12 items-center justify-center rounded-full bg-red-50 text-red-600"
          }
        >
          <Icon className="size-6" aria-hidden="true" />
        </div>
        <p role={succeeded ? "status" : "alert"} className="mt-4 text-base font-semibold text-slate-900">
          {succeeded ? "Your payment was successful." : PAYMENT_NOT_COMPLETED}
        </p>
        <p className="mt-1 max-w-sm text-sm text-slate-500">
          {succeeded
            ? "Your subscription or top-up is being applied to your account."
            : "No money was taken. You can try again with another card."}
        </p>
        {paymentIntent && (
          <p className="mt-3 text-xs text-slate-400">
            Reference <span className="font-mono break-all">{paymentIntent}</span>
          </p>
        )}
        <div className="mt-6 flex flex-col gap-2 sm:flex-row">
          <ButtonLink to={returnTo}>{returnTo === "/wallet" ? "Go to Wallet" : "Continue"}</ButtonLink>
          <ButtonLink to="/dashboard" variant="secondary">
            Go to Dashboard
          </ButtonLink>
        </div>
      </Card>
    </PageContainer>
  );
}

/** Opened without a payment's result (a bookmark, a typed address): neither success nor failure. */
function NothingToConfirm() {
  return (
    <PageContainer className="max-w-3xl">
      <PageHeader title="Payment Status" />
      <EmptyState
        icon={Info}
        title="Nothing to confirm here"
        description="This page shows the result of a card payment when your bank sends you back after confirming it. No payment is waiting to be confirmed."
        action={
          <div className="flex flex-col gap-2 sm:flex-row">
            <ButtonLink to="/wallet">Go to Wallet</ButtonLink>
            <ButtonLink to="/dashboard" variant="secondary">
              Go to Dashboard
            </ButtonLink>
          </div>
        }
      />
    </PageContainer>
  );
}
