import type { WorkflowConfig, WorkflowVersion } from "@promptmint/contracts";
import { History, Rocket, Undo2 } from "lucide-react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { QueryStates } from "../../components/ui/query-states";
import { getErrorMessage } from "../../lib/api-client";
import { applicationQueryKey } from "../../lib/applications-query";
import { formatDateTime } from "../../lib/format";
import { ExperimentsPanel } from "../releases/experiments-page";
import { useMoveWorkflowProduction, useWorkflowVersions } from "./api/workflow-releases";

/**
 * What callers get against what was saved last (docs/decisions/060): while the latest save is not
 * in production, it says so and offers to promote it in one click.
 */
export function WorkflowReleaseBanner({ slug, config }: { slug: string; config: WorkflowConfig }) {
  const move = useMoveWorkflowProduction(slug, config.id);
  const latest = config.current_version;
  const production = config.production_version;
  if (latest === production) {
    return (
      <p className="mb-6 flex items-center gap-2 text-sm text-slate-600" data-testid="release-state">
        <Badge tone="green">production</Badge>
        Callers get v{production}, your latest save.
      </p>
    );
  }
  const promote = () =>
    move.mutate(
      { version: latest, reason: `Promoted v${latest} from the editor` },
      {
        onSuccess: () => toast.success(`v${latest} is in production`),
        onError: (error) => toast.error(getErrorMessage(error)),
      },
    );
  return (
    <Alert
      tone="warning"
      role="status"
      className="mb-6"
      title={`Callers still get v${production}; your latest save is v${latest}`}
    >
      <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
        <p>Saving a live app changes nothing for its callers until you promote the new version.</p>
        <Button size="sm" onClick={promote} busy={move.isPending} className="self-start sm:self-auto">
          <Rocket className="size-4" aria-hidden="true" />
          Promote v{latest}
        </Button>
      </div>
    </Alert>
  );
}

/** Every saved configuration, newest first, with its labels and one click to release or roll back. */
export function WorkflowVersionsTab({ slug, config }: { slug: string; config: WorkflowConfig }) {
  const versions = useWorkflowVersions(slug, config.id);
  const move = useMoveWorkflowProduction(slug, config.id);
  const release = (version: WorkflowVersion) => {
    const rollback = version.version < config.production_version;
    move.mutate(
      {
        version: version.version,
        reason: rollback ? `Rolled back to v${version.version}` : `Promoted v${version.version}`,
      },
      {
        onSuccess: () =>
          toast.success(
            rollback
              ? `Rolled back: callers get v${version.version}`
              : `v${version.version} is in production`,
          ),
        onError: (error) => toast.error(getErrorMessage(error)),
      },
    );
  };
  return (
    <Card>
      <CardHeader
        title="Versions"
        description="Every save is a version. Callers get the one labelled production, or pin another with the Promptmint-Version header (v12 or a label)."
      />
      <QueryStates query={versions} loading="Loading versions...">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState framed={false} icon={History} title="No versions yet" />
          ) : (
            <ol className="divide-y divide-slate-100" aria-label="Versions">
              {rows.map((version) => (
                <VersionRow
                  key={version.id}
                  version={version}
                  production={config.production_version}
                  busy={move.isPending && move.variables?.version === version.version}
                  disabled={move.isPending}
                  onRelease={() => release(version)}
                />
              ))}
            </ol>
          )
        }
      </QueryStates>
    </Card>
  );
}

/**
 * The Experiments tab: the prompt apps' experiments panel over this workflow's versions
 * (docs/decisions/058), e.g. two versions pointing at two provider apps. Ending one refreshes the
 * app's workflow and versions (production may have moved).
 */
export function WorkflowExperimentsTab({ slug, config }: { slug: string; config: WorkflowConfig }) {
  const versions = useWorkflowVersions(slug, config.id);
  if (versions.isError) return <ErrorBox message={getErrorMessage(versions.error)} />;
  return (
    <ExperimentsPanel
      subject={{ kind: "workflow", id: config.id, stale: [applicationQueryKey(slug)] }}
      production={config.production_version}
      versions={versions.data?.map((version) => ({
        version: version.version,
        labels: version.labels,
        // Which provider each version calls is what a creator chooses arms by.
        changelog: [version.provider ?? "no provider", version.changelog].filter(Boolean).join(" · "),
      }))}
    />
  );
}

function VersionRow({
  version,
  production,
  busy,
  disabled,
  onRelease,
}: {
  version: WorkflowVersion;
  production: number;
  busy: boolean;
  disabled: boolean;
  onRelease: () => void;
}) {
  const inProduction = version.version === production;
  const rollback = version.version < production;
  return (
    <li className="flex flex-col gap-3 px-5 py-4 sm:flex-row sm:items-center sm:justify-between">
      <div className="min-w-0 space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <span className="font-semibold text-slate-900">v{version.version}</span>
          {version.labels.map((label) => (
            <Badge key={label} tone={label === "production" ? "green" : label === "latest" ? "blue" : "gray"}>
              {label}
            </Badge>
          ))}
          <span className="text-sm text-slate-500">{version.provider ?? "no provider"}</span>
        </div>
        <p className="text-sm break-words text-slate-700">{version.changelog || "No changelog"}</p>
        <p className="text-xs text-slate-500">
          {version.author_name ?? "Unknown author"} · {formatDateTime(version.created_at)}
        </p>
      </div>
      {!inProduction && (
        <Button
          size="sm"
          variant={rollback ? "secondary" : "primary"}
          onClick={onRelease}
          busy={busy}
          disabled={disabled}
          className="self-start sm:self-auto"
          aria-label={rollback ? `Roll back to v${version.version}` : `Promote v${version.version}`}
        >
          {rollback ? (
            <Undo2 className="size-4" aria-hidden="true" />
          ) : (
            <Rocket className="size-4" aria-hidden="true" />
          )}
          {rollback ? "Roll back" : "Promote"}
        </Button>
      )}
    </li>
  );
}
