import type { PromptConfig } from "@promptmint/contracts";
import { History, RotateCcw } from "lucide-react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime } from "../../lib/format";
import { usePromptVersions } from "./api/list-prompt-versions";
import { useRestorePromptVersion } from "./api/restore-prompt-version";

/** Every saved version, newest first; restoring one makes a copy of it the active version. */
export function PromptVersionHistory({
  slug,
  promptId,
  onRestored,
}: {
  slug: string;
  promptId: string;
  onRestored: (config: PromptConfig) => void;
}) {
  const versions = usePromptVersions(promptId);
  const restore = useRestorePromptVersion(promptId, slug);

  return (
    <Card>
      <CardHeader
        title="Version History"
        description="Each saved change of the template or schemas is a version."
      />
      <CardBody>
        {restore.isError && (
          <Alert tone="error" className="mb-4">
            {getErrorMessage(restore.error)}
          </Alert>
        )}
        {versions.isPending ? (
          <LoadingState label="Loading versions..." className="py-6" />
        ) : versions.isError ? (
          <Alert tone="error">{getErrorMessage(versions.error)}</Alert>
        ) : versions.data.length === 0 ? (
          <p className="text-sm text-slate-500">No versions yet.</p>
        ) : (
          <ol className="divide-y divide-slate-100">
            {versions.data.map((version) => (
              <li key={version.id} className="flex flex-wrap items-center justify-between gap-3 py-3">
                <div className="flex min-w-0 items-start gap-3">
                  <History className="mt-0.5 size-4 shrink-0 text-slate-400" aria-hidden="true" />
                  <div className="min-w-0">
                    <p className="flex items-center gap-2 text-sm font-medium text-slate-900">
                      Version {version.version}
                      {version.is_active && <Badge tone="green">Active</Badge>}
                    </p>
                    <p className="text-sm break-words text-slate-600">
                      {version.changelog || "No changelog"}
                    </p>
                    <p className="text-xs text-slate-400">{formatDateTime(version.created_at)}</p>
                  </div>
                </div>
                {!version.is_active && (
                  <Button
                    variant="secondary"
                    size="sm"
                    aria-label={`Restore version ${version.version}`}
                    busy={restore.isPending && restore.variables === version.id}
                    disabled={restore.isPending}
                    onClick={() =>
                      restore.mutate(version.id, {
                        onSuccess: (config) => {
                          onRestored(config);
                          toast.success(`Restored version ${version.version}`);
                        },
                      })
                    }
                  >
                    <RotateCcw className="size-4" aria-hidden="true" />
                    Restore
                  </Button>
                )}
              </li>
            ))}
          </ol>
        )}
      </CardBody>
    </Card>
  );
}
