import type { ApiKey } from "@promptmint/contracts";
import { KeyRound, Pencil, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatDate, formatDateTime } from "../../lib/format";
import { useApiKeys } from "./api/list-api-keys";
import { useRevokeApiKey } from "./api/revoke-api-key";
import { EditApiKeyDialog } from "./edit-api-key-dialog";
import { KeySpendMeter } from "./key-spend-meter";

const headerCell = "px-4 py-3 text-left text-xs font-semibold uppercase tracking-wide text-slate-500";
const cell = "px-4 py-3 text-sm whitespace-nowrap";

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
      <div className="overflow-x-auto">
        <table className="min-w-full divide-y divide-slate-200">
          <thead className="bg-slate-50">
            <tr>
              <th scope="col" className={headerCell}>
                Name
              </th>
              <th scope="col" className={headerCell}>
                Key
              </th>
              <th scope="col" className={headerCell}>
                Created
              </th>
              <th scope="col" className={headerCell}>
                Last Used
              </th>
              <th scope="col" className={headerCell}>
                Spend
              </th>
              <th scope="col" className={headerCell}>
                Expires
              </th>
              <th scope="col" className={headerCell}>
                Apps
              </th>
              <th scope="col" className={`${headerCell} text-right`}>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100 bg-white">
            {keys.data.map((key) => (
              <tr key={key.id}>
                <th scope="row" className={`${cell} text-left font-medium text-slate-900`}>
                  {key.name}
                </th>
                <td className={`${cell} font-mono text-xs text-slate-600`}>{key.prefix}…</td>
                <td className={`${cell} text-slate-600`}>{formatDate(key.created_at)}</td>
                <td className={`${cell} text-slate-600`}>{formatDateTime(key.last_used_at, "Never")}</td>
                <td className={cell}>
                  <KeySpendMeter apiKey={key} />
                </td>
                <td className={`${cell} text-slate-600`}>{expiryOf(key)}</td>
                <td className={`${cell} max-w-48 truncate text-slate-600`}>
                  {key.allowed_apps === null
                    ? "All apps"
                    : key.allowed_apps.join(", ") || "None (apps deleted)"}
                </td>
                <td className={`${cell} text-right`}>
                  <Button
                    variant="ghost"
                    size="sm"
                    aria-label={`Edit ${key.name}`}
                    onClick={() => setEditing(key)}
                  >
                    <Pencil className="size-4" aria-hidden="true" />
                    Edit
                  </Button>
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
          </tbody>
        </table>
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
