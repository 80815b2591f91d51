import type { Package } from "@promptmint/contracts";
import { Plus } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { orderPlans, planChangeNotice, planPriceLabel } from "../../components/billing/plan-features";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button, EditButton } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { Modal } from "../../components/ui/modal";
import { getErrorMessage } from "../../lib/api-client";
import { formatNumber } from "../../lib/format";
import { useDeactivatePackage, useSavePackage } from "./api/save-package";
import { PlanForm } from "./plan-form";

type Editing = { plan: Package | null } | null;

/** The owner's section: create plans, change them, withdraw them from sale. */
export function PlanManagement({ appSlug, plans }: { appSlug: string; plans: readonly Package[] }) {
  const save = useSavePackage(appSlug);
  const deactivate = useDeactivatePackage(appSlug);
  const [editing, setEditing] = useState<Editing>(null);
  const [withdrawing, setWithdrawing] = useState<Package | null>(null);

  const openEditor = (plan: Package | null) => {
    save.reset();
    setEditing({ plan });
  };

  return (
    <Card>
      <CardHeader
        title="Plans"
        description="You own this application: offer plans that include a number of calls per period."
        actions={
          <Button size="sm" onClick={() => openEditor(null)}>
            <Plus className="size-4" aria-hidden="true" />
            Create Plan
          </Button>
        }
      />
      <CardBody>
        {plans.length === 0 ? (
          <p className="text-sm text-slate-500">
            No plans yet. Without a plan, every call is paid from the caller's wallet at the app's price.
          </p>
        ) : (
          <ul className="divide-y divide-slate-100" aria-label="Your plans">
            {orderPlans(plans).map((plan) => (
              <li
                key={plan.id}
                aria-label={plan.name}
                className="flex flex-wrap items-center justify-between gap-3 py-3 first:pt-0 last:pb-0"
              >
                <div className="min-w-0">
                  <p className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-900">
                    {plan.name}
                    <Badge tone={plan.is_active ? "green" : "gray"}>
                      {plan.is_active ? "Active" : "Inactive"}
                    </Badge>
                  </p>
                  <p className="text-xs text-slate-500">
                    {planPriceLabel(plan)} · {formatNumber(plan.included_calls)} included calls
                  </p>
                  {plan.pending_terms && <p className="text-xs text-amber-700">{planChangeNotice(plan)}</p>}
                </div>
                <div className="flex items-center gap-2">
                  <EditButton variant="secondary" itemName={plan.name} onClick={() => openEditor(plan)} />
                  {plan.is_active && (
                    <Button
                      variant="ghost"
                      size="sm"
                      aria-label={`Deactivate ${plan.name}`}
                      className="text-red-600 hover:bg-red-50 hover:text-red-700"
                      onClick={() => {
                        deactivate.reset();
                        setWithdrawing(plan);
                      }}
                    >
                      Deactivate
                    </Button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </CardBody>

      <Modal
        open={editing !== null}
        onOpenChange={(open) => !open && setEditing(null)}
        busy={save.isPending}
        title={editing?.plan ? `Edit ${editing.plan.name}` : "Create Plan"}
        description="Prices are per 30-day period, in US dollars."
      >
        {editing && (
          <PlanForm
            key={editing.plan?.id ?? "new"}
            plan={editing.plan}
            busy={save.isPending}
            error={save.error}
            onCancel={() => setEditing(null)}
            onSubmit={(body) =>
              save.mutate(
                { id: editing.plan?.id, body },
                {
                  onSuccess: (saved) => {
                    const notice = planChangeNotice(saved);
                    toast.success(
                      editing.plan
                        ? `${saved.name} saved${notice ? `. ${notice} for subscribers' periods starting then; until then they keep the current terms` : ""}`
                        : `${saved.name} created`,
                    );
                    setEditing(null);
                  },
                },
              )
            }
          />
        )}
      </Modal>

      <ConfirmDialog
        open={withdrawing !== null}
        onOpenChange={(open) => !open && setWithdrawing(null)}
        title="Deactivate plan?"
        description={
          withdrawing
            ? `${withdrawing.name} will no longer be offered. Current subscribers keep it until their period ends.`
            : ""
        }
        confirmLabel="Deactivate"
        busyLabel="Deactivating..."
        busy={deactivate.isPending}
        onConfirm={() =>
          withdrawing &&
          deactivate.mutate(withdrawing.id, {
            onSuccess: () => {
              toast.success(`${withdrawing.name} deactivated`);
              setWithdrawing(null);
            },
          })
        }
      >
        {deactivate.isError && (
          <Alert tone="error" title="Failed to deactivate plan" className="mt-4">
            {getErrorMessage(deactivate.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}
