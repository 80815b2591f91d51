import type { Subscription } from "@promptmint/contracts";
import { CalendarClock, Repeat } from "lucide-react";
import { type ReactNode, useState } from "react";
import { Link } from "react-router";
import { toast } from "sonner";
import { getErrorMessage } from "../../lib/api-client";
import { useCancelSubscription, useResumeSubscription } from "../../lib/billing/cancel-subscription";
import { formatDate, formatDateTime, formatNumber, formatPlanTerms } from "../../lib/format";
import { Alert } from "../ui/alert";
import { Badge, type BadgeTone } from "../ui/badge";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { ConfirmDialog } from "../ui/confirm-dialog";

/** SPEC §4: active green, canceled red, any other status yellow. */
export function subscriptionToneOf(status: string): BadgeTone {
  if (status === "active") return "green";
  if (status === "canceled") return "red";
  return "yellow";
}

/** SPEC §2: only an active subscription that is not already ending can be canceled. */
export function canCancel(subscription: Subscription): boolean {
  return subscription.status === "active" && !subscription.cancel_at_period_end;
}

/** A pending cancel of an active subscription can be undone (resumed) until its period ends. */
export function canResume(subscription: Subscription): boolean {
  return subscription.status === "active" && subscription.cancel_at_period_end;
}

/** A subscription as a list shows it: across apps (My subscriptions) it also names its app. */
export type ListedSubscription = Subscription & { application_name?: string };

export function SubscriptionList({
  subscriptions,
  title = "Current Subscriptions",
  description = "Plans you are subscribed to for this application.",
  empty = "You have no subscriptions to this application. Calls are paid from your wallet.",
}: {
  subscriptions: readonly ListedSubscription[];
  title?: string;
  description?: string;
  empty?: ReactNode;
}) {
  const cancel = useCancelSubscription();
  const resume = useResumeSubscription();
  const [canceling, setCanceling] = useState<Subscription | null>(null);

  const confirmCancel = () => {
    if (!canceling) return;
    cancel.mutate(
      { appSlug: canceling.application_slug, id: canceling.id },
      {
        onSuccess: (updated) => {
          setCanceling(null);
          toast.success(`${updated.package_name} will end on ${formatDate(updated.current_period_end)}`);
        },
      },
    );
  };
  const resumeOne = (subscription: Subscription) =>
    resume.mutate(
      { appSlug: subscription.application_slug, id: subscription.id },
      {
        onSuccess: (updated) =>
          toast.success(`${updated.package_name} renews on ${formatDate(updated.current_period_end)}`),
      },
    );

  return (
    <Card>
      <CardHeader title={title} description={description} />
      <CardBody>
        {resume.isError && (
          <Alert tone="error" title="Failed to resume subscription" className="mb-4">
            {getErrorMessage(resume.error)}
          </Alert>
        )}
        {subscriptions.length === 0 ? (
          <p className="text-sm text-slate-500">{empty}</p>
        ) : (
          <ul className="space-y-4" aria-label="Subscriptions">
            {subscriptions.map((subscription) => (
              <SubscriptionItem
                key={subscription.id}
                subscription={subscription}
                resuming={resume.isPending && resume.variables?.id === subscription.id}
                onCancel={() => {
                  cancel.reset();
                  setCanceling(subscription);
                }}
                onResume={() => resumeOne(subscription)}
              />
            ))}
          </ul>
        )}
      </CardBody>
      <ConfirmDialog
        open={canceling !== null}
        onOpenChange={(open) => !open && setCanceling(null)}
        title="Cancel subscription?"
        description={
          canceling
            ? `${canceling.package_name} stays active until ${formatDate(canceling.current_period_end)} and will not renew.`
            : ""
        }
        confirmLabel="Cancel Subscription"
        dismissLabel="Keep Subscription"
        busyLabel="Canceling..."
        busy={cancel.isPending}
        onConfirm={confirmCancel}
      >
        {cancel.isError && (
          <Alert tone="error" title="Failed to cancel subscription" className="mt-4">
            {getErrorMessage(cancel.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}

function SubscriptionItem({
  subscription,
  resuming,
  onCancel,
  onResume,
}: {
  subscription: ListedSubscription;
  resuming: boolean;
  onCancel: () => void;
  onResume: () => void;
}) {
  const { calls_used: used, calls_included: included } = subscription;
  const usedPercent = included > 0 ? Math.min(100, Math.round((used / included) * 100)) : 0;
  const nameId = `subscription-${subscription.id}`;
  const ending = subscription.cancel_at_period_end || subscription.status !== "active";

  return (
    <li aria-labelledby={nameId} className="rounded-lg border border-slate-200 p-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          {subscription.application_name && (
            <Link
              to={`/explore/${encodeURIComponent(subscription.application_slug)}`}
              className="text-sm font-medium text-brand-700 hover:underline"
            >
              {subscription.application_name}
            </Link>
          )}
          <div className="flex flex-wrap items-center gap-2">
            <Repeat className="size-4 text-brand-600" aria-hidden="true" />
            <h3 id={nameId} className="font-semibold text-slate-900">
              {subscription.package_name}
            </h3>
            <Badge tone={subscriptionToneOf(subscription.status)} className="capitalize">
              {subscription.status.replace(/_/g, " ")}
            </Badge>
            {subscription.cancel_at_period_end && <Badge tone="yellow">Canceling</Badge>}
          </div>
          <p className="mt-1 flex items-center gap-1.5 text-sm text-slate-500">
            <CalendarClock className="size-4" aria-hidden="true" />
            {subscription.status === "incomplete" ? (
              "Waiting for Stripe to confirm the card payment"
            ) : (
              <>
                {ending ? "Ends" : "Renews"} on {formatDate(subscription.current_period_end)} ·{" "}
                {formatNumber(subscription.days_remaining)}{" "}
                {subscription.days_remaining === 1 ? "day" : "days"} remaining
                {!ending &&
                  (subscription.renews_from === "card" ? " · charged to your card" : " · from your wallet")}
              </>
            )}
          </p>
          {subscription.status !== "incomplete" && (
            <p className="mt-1 text-sm text-slate-500">
              Current period: {formatDate(subscription.current_period_start)} –{" "}
              {formatDate(subscription.current_period_end)}
            </p>
          )}
          {subscription.terms && (
            <p className="mt-1 text-sm text-slate-500">This period: {formatPlanTerms(subscription.terms)}</p>
          )}
          {subscription.next_terms && !ending && (
            <p className="mt-1 text-sm text-amber-700">
              The creator changed this plan: from your renewal on{" "}
              {formatDateTime(subscription.next_terms.applies_from)},{" "}
              {formatPlanTerms(subscription.next_terms)}
            </p>
          )}
        </div>
        {canResume(subscription) && (
          <Button
            variant="secondary"
            size="sm"
            aria-label={`Resume ${subscription.package_name} subscription`}
            busy={resuming}
            onClick={onResume}
          >
            Resume
          </Button>
        )}
        {canCancel(subscription) && (
          <Button
            variant="secondary"
            size="sm"
            aria-label={`Cancel ${subscription.package_name} subscription`}
            onClick={onCancel}
          >
            Cancel
          </Button>
        )}
      </div>
      <div className="mt-4">
        <div className="flex justify-between text-sm">
          <span className="text-slate-600">Calls used</span>
          <span className="font-medium text-slate-900 tabular-nums">
            {formatNumber(used)} / {formatNumber(included)}
          </span>
        </div>
        <div
          role="progressbar"
          aria-label={`Calls used of ${subscription.package_name}`}
          aria-valuemin={0}
          aria-valuemax={included}
          aria-valuenow={Math.min(used, included)}
          className="mt-2 h-2 overflow-hidden rounded-full bg-slate-100"
        >
          <div
            className={usedPercent >= 100 ? "h-full bg-amber-500" : "h-full bg-brand-600"}
            style={{ width: `${usedPercent}%` }}
          />
        </div>
        {used >= included && included > 0 && (
          <p className="mt-2 text-xs text-slate-500">
            Included calls used up: further calls this period are paid from your wallet.
          </p>
        )}
      </div>
    </li>
  );
}
