import type { PaymentMethod } from "@promptmint/contracts";
import { CreditCard, Plus, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { getErrorMessage } from "../../lib/api-client";
import { cardBrandName, formatCardExpiry } from "../../lib/card-display";
import { AddPaymentMethodDialog } from "./add-payment-method-dialog";
import { useDeletePaymentMethod, useMakeDefaultPaymentMethod } from "./api/change-payment-method";

function describeCard(method: PaymentMethod): string {
  return `${cardBrandName(method.card_brand)} ending in ${method.card_last4}`;
}

export function PaymentMethodList({
  appSlug,
  paymentMethods,
}: {
  appSlug: string;
  paymentMethods: readonly PaymentMethod[];
}) {
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<PaymentMethod | null>(null);
  const remove = useDeletePaymentMethod(appSlug);
  const makeDefault = useMakeDefaultPaymentMethod(appSlug);

  const confirmDelete = () => {
    if (!deleting) return;
    remove.mutate(deleting.id, {
      onSuccess: () => {
        toast.success(`${describeCard(deleting)} removed`);
        setDeleting(null);
      },
    });
  };

  return (
    <Card>
      <CardHeader
        title="Payment Methods"
        description="Cards saved to your account."
        actions={
          <Button size="sm" onClick={() => setAdding(true)}>
            <Plus className="size-4" aria-hidden="true" />
            Add Payment Method
          </Button>
        }
      />
      <CardBody>
        {makeDefault.isError && (
          <Alert tone="error" title="Failed to update payment method" className="mb-4">
            {getErrorMessage(makeDefault.error)}
          </Alert>
        )}
        {paymentMethods.length === 0 ? (
          <p className="text-sm text-slate-500">No payment methods saved yet.</p>
        ) : (
          <ul className="divide-y divide-slate-100" aria-label="Saved cards">
            {paymentMethods.map((method) => (
              <li
                key={method.id}
                aria-label={describeCard(method)}
                className="flex flex-wrap items-center justify-between gap-3 py-3 first:pt-0 last:pb-0"
              >
                <div className="flex min-w-0 items-center gap-3">
                  <div className="flex size-10 shrink-0 items-center justify-center rounded-lg bg-slate-100 text-slate-500">
                    <CreditCard className="size-5" aria-hidden="true" />
                  </div>
                  <div className="min-w-0">
                    <p className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-900">
                      <span>{cardBrandName(method.card_brand)}</span>
                      <span className="font-mono tracking-wider">•••• {method.card_last4}</span>
                      {method.is_default && <Badge tone="brand">Default</Badge>}
                    </p>
                    <p className="text-xs text-slate-500">Expires {formatCardExpiry(method)}</p>
                  </div>
                </div>
                <div className="flex items-center gap-2">
                  {!method.is_default && (
                    <Button
                      variant="ghost"
                      size="sm"
                      busy={makeDefault.isPending && makeDefault.variables === method.id}
                      aria-label={`Make ${describeCard(method)} the default`}
                      onClick={() => makeDefault.mutate(method.id)}
                    >
                      Make default
                    </Button>
                  )}
                  <Button
                    variant="ghost"
                    size="sm"
                    aria-label={`Delete ${describeCard(method)}`}
                    className="text-red-600 hover:bg-red-50 hover:text-red-700"
                    onClick={() => {
                      remove.reset();
                      setDeleting(method);
                    }}
                  >
                    <Trash2 className="size-4" aria-hidden="true" />
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </CardBody>
      <AddPaymentMethodDialog
        appSlug={appSlug}
        open={adding}
        firstCard={paymentMethods.length === 0}
        onClose={() => setAdding(false)}
      />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title="Delete payment method?"
        description={deleting ? `${describeCard(deleting)} will be removed from your account.` : ""}
        confirmLabel="Delete"
        busyLabel="Deleting..."
        busy={remove.isPending}
        onConfirm={confirmDelete}
      >
        {remove.isError && (
          <Alert tone="error" title="Failed to delete payment method" className="mt-4">
            {getErrorMessage(remove.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}
