import type { ApiKey } from "@promptmint/contracts";
import { KeyRound, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button, EditButton } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { Table } from "../../components/ui/table";
import { getErrorMessage } from "../../lib/api-client";
import { useApiKeys } from "../../lib/api-keys/list-api-keys";
import { formatDate, formatDateTime } from "../../lib/format";
import { useRevokeApiKey } from "./api/revoke-api-key";
import { EditApiKeyDialog } from "./edit-api-key-dialog";
import { KeySpendMeter } from "./key-spend-meter";

// Below md each key is a card: the cells stack two to a row, each under its column's name
// (data-label), so a phone never scrolls sideways.
const cell =
  "px-4 py-3 text-sm max-md:block max-md:p-0 max-md:before:mb-0.5 max-md:before:block " +
  "max-md:before:text-xs max-md:before:font-semibold max-md:before:uppercase max-md:before:tracking-wide " +
  "max-md:before:text-slate-500 max-md:before:content-[attr(data-label)]";
const wideCell = "max-md:col-span-2";

export function ApiKeyList() {
  const keys = useApiKeys();
  const revoke = useRevokeApiKey();
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [editing, setEditing] = useState<ApiKey | null>(null);

  if (keys.isPending) return <LoadingState label="Loading API keys..." />;
  if (keys.isError) return <ErrorBox message={getErrorMessage(keys.error)} />;
  if (keys.data.length === 0) {
    return (
      <EmptyState
        icon={KeyRound}
        title="No API keys"
        description="Create a key to call your applications from code or the API test console."
      />
    );
  }

  const confirmRevoke = () => {
    if (!revoking) return;
    revoke.mutate(revoking.id, {
      onSuccess: () => {
        toast.success(`Revoked ${revoking.name}`);
        setRevoking(null);
      },
    });
  };

  return (
    <Card className="overflow-hidden">
      <CardHeader title="Your API Keys" />
      {/* relative: the sr-only header is placed inside the scrolling box, not past the page's edge. */}
      <div className="relative overflow-x-auto">
        <Table
          className="w-full max-md:block"
          headClassName="max-md:hidden"
          bodyClassName="max-md:block"
          columns={[
            { label: "Name" },
            { label: "Key" },
            { label: "Created" },
            { label: "Last Used" },
            { label: "Spend" },
            { label: "Expires" },
            { label: "Apps" },
            { label: "Actions", className: "text-right", srOnly: true },
          ]}
        >
          {keys.data.map((key) => (
            <tr
              key={key.id}
              className="max-md:grid max-md:grid-cols-2 max-md:gap-x-4 max-md:gap-y-3 max-md:p-4"
            >
              <th
                scope="row"
                className={`${cell} ${wideCell} min-w-40 text-left font-medium break-words text-slate-900 max-md:text-base`}
              >
                {key.name}
              </th>
              <td data-label="Key" className={`${cell} font-mono whitespace-nowrap text-xs text-slate-600`}>
                {key.prefix}…
              </td>
              <td data-label="Created" className={`${cell} whitespace-nowrap text-slate-600`}>
                {formatDate(key.created_at)}
              </td>
              <td data-label="Last Used" className={`${cell} min-w-24 text-slate-600`}>
                {formatDateTime(key.last_used_at, "Never")}
              </td>
              <td data-label="Spend" className={`${cell} ${wideCell} max-md:order-1`}>
                <KeySpendMeter apiKey={key} />
              </td>
              <td data-label="Expires" className={`${cell} min-w-28 text-slate-600`}>
                {expiryOf(key)}
              </td>
              <td
                data-label="Apps"
                className={`${cell} ${wideCell} min-w-32 break-words text-slate-600 max-md:order-2`}
              >
                {key.allowed_apps === null
                  ? "All apps"
                  : key.allowed_apps.join(", ") || "None (apps deleted)"}
              </td>
              <td
                className={`${cell} ${wideCell} text-right md:whitespace-nowrap max-md:order-3 max-md:-ml-2.5 max-md:text-left`}
              >
                <EditButton variant="ghost" itemName={key.name} onClick={() => setEditing(key)} />
                <Button
                  variant="ghost"
                  size="sm"
                  className="text-red-600 hover:bg-red-50 hover:text-red-700"
                  aria-label={`Revoke ${key.name}`}
                  onClick={() => {
                    revoke.reset();
                    setRevoking(key);
                  }}
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                  Revoke
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      </div>
      {editing && <EditApiKeyDialog apiKey={editing} onClose={() => setEditing(null)} />}
      <ConfirmDialog
        open={revoking !== null}
        onOpenChange={(open) => !open && setRevoking(null)}
        title="Revoke API key"
        description={`Revoke “${revoking?.name ?? ""}”? Anything that calls with this key stops working immediately. This cannot be undone.`}
        confirmLabel="Revoke"
        busyLabel="Revoking..."
        busy={revoke.isPending}
        onConfirm={confirmRevoke}
      >
        {revoke.isError && (
          <Alert tone="error" className="mt-4">
            {getErrorMessage(revoke.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}

/** "No expiry", the UTC moment it stops working, or "Expired" once past. */
function expiryOf(key: ApiKey): string {
  if (!key.expires_at) return "No expiry";
  const at = new Date(key.expires_at);
  const day = at.toLocaleDateString("en-GB", {
    day: "numeric",
    month: "short",
    year: "numeric",
    timeZone: "UTC",
  });
  return at.getTime() <= Date.now() ? `Expired ${day}` : `${day}, 00:00 UTC`;
}
