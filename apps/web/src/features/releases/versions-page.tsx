import type { Application, LabelMove, PromptConfig, PromptVersion } from "@promptmint/contracts";
import { NewLabelNameSchema } from "@promptmint/contracts";
import {
  ArrowLeft,
  ArrowRight,
  GitBranch,
  GitCompare,
  History,
  Rocket,
  RotateCcw,
  Tag,
  X,
} from "lucide-react";
import { type ReactNode, useState } from "react";
import { useParams } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { ApplicationHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { StatusBadge } from "../../components/ui/status-badge";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { cn } from "../../lib/cn";
import { formatDateTime } from "../../lib/format";
import { usePromptConfig } from "../prompts/api/get-prompt-config";
import { usePromptVersions } from "../prompts/api/list-prompt-versions";
import { PromptAppTabs } from "../prompts/prompt-app-tabs";
import { useMoveLabel, usePromptLabels, useRemoveLabel } from "./api/labels";
import { PromoteDialog } from "./promote-dialog";
import { RolloutStatus } from "./rollout-status";
import { type DiffLayout, VersionDiff } from "./version-diff";

/** Labels the server moves itself: `production` by a release, `latest` by every save. */
const BUILT_IN_LABELS = new Set(["production", "latest"]);

/**
 * The version production had before its last move: what a rollback moves it back to. Null when
 * production never moved by hand (or moved to where it is from nowhere).
 */
export function previousProduction(moves: LabelMove[], production: number): number | null {
  const last = moves.find((move) => move.name === "production" && move.to_version === production);
  return last?.from_version ?? null;
}

/** The pair a diff opens with: production against the latest, or the latest against the one before. */
export function defaultComparison(versions: PromptVersion[], production: number): [number, number] {
  const latest = versions[0]?.version ?? production;
  if (latest !== production) return [production, latest];
  const before = versions[1]?.version;
  return [before ?? latest, latest];
}

/** /prompts/:slug/versions */
export function VersionsPage() {
  const { slug = "" } = useParams();
  const application = useApplication(slug);
  const config = usePromptConfig(slug, { enabled: application.isSuccess });

  let body: ReactNode;
  if (application.isError && !isNotFoundError(application.error)) {
    body = <ErrorBox message={getErrorMessage(application.error)} />;
  } else if (config.isError && !isNotFoundError(config.error)) {
    body = <ErrorBox message={getErrorMessage(config.error)} />;
  } else if (application.isError || config.isError || application.data?.type === "workflow") {
    body = (
      <NotFoundState icon={GitBranch} title="Prompt not found" backTo="/prompts" backLabel="Back to List" />
    );
  } else if (application.data && config.data) {
    body = <Versions key={slug} application={application.data} config={config.data} />;
  } else {
    body = <LoadingState label="Loading versions..." />;
  }
  return <PageContainer>{body}</PageContainer>;
}

type Dialog =
  | { kind: "promote"; version: PromptVersion }
  | { kind: "rollback"; version: PromptVersion }
  | { kind: "label"; version: PromptVersion }
  | { kind: "unlabel"; name: string; version: number };

function Versions({ application, config }: { application: Application; config: PromptConfig }) {
  const versions = usePromptVersions(config.id);
  const labels = usePromptLabels(config.id);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const [comparison, setComparison] = useState<[number, number] | null>(null);
  const [layout, setLayout] = useState<DiffLayout>(() =>
    typeof window !== "undefined" && window.innerWidth < 768 ? "unified" : "split",
  );

  const list = versions.data ?? [];
  const byNumber = new Map(list.map((version) => [version.version, version]));
  const production = config.production_version;
  const productionVersion = byNumber.get(production);
  const latestVersion = list[0];
  const rollbackTo = labels.data ? previousProduction(labels.data.moves, production) : null;
  const rollbackVersion = rollbackTo === null ? undefined : byNumber.get(rollbackTo);
  const [fromNumber, toNumber] = comparison ?? defaultComparison(list, production);
  const from = byNumber.get(fromNumber);
  const to = byNumber.get(toNumber);

  const compareWith = (version: PromptVersion) => {
    const other =
      version.version === production
        ? (list.find((v) => v.version < version.version)?.version ?? production)
        : production;
    setComparison([Math.min(other, version.version), Math.max(other, version.version)]);
    document.getElementById("compare-versions")?.scrollIntoView({ behavior: "smooth", block: "start" });
  };

  return (
    <>
      <ApplicationHeader
        application={application}
        badges={
          <>
            <Badge tone="brand">{application.interaction_mode === "chat" ? "Chat" : "Completion"}</Badge>
            <StatusBadge status={application.status} />
          </>
        }
        actions={
          <ButtonLink to="/prompts" variant="secondary" size="sm">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <PromptAppTabs slug={application.slug} current="versions" />

      {versions.isPending ? (
        <LoadingState label="Loading versions..." />
      ) : versions.isError ? (
        <ErrorBox message={getErrorMessage(versions.error)} />
      ) : list.length === 0 ? (
        <EmptyState
          icon={GitBranch}
          title="No versions yet"
          description="Save the prompt in the editor: each save that changes it is a version."
          action={<ButtonLink to={`/prompts/${application.slug}`}>Open the editor</ButtonLink>}
        />
      ) : (
        <div className="space-y-6">
          <ReleaseSummary
            application={application}
            production={productionVersion}
            latest={latestVersion}
            rollbackTo={rollbackVersion}
            onPromote={(version) => setDialog({ kind: "promote", version })}
            onRollback={(version) => setDialog({ kind: "rollback", version })}
          />
          <RolloutStatus subject={{ kind: "prompt", id: config.id, stale: [["prompts", config.id]] }} />

          <div className="grid gap-6 xl:grid-cols-5">
            <Card className="xl:col-span-2">
              <CardHeader
                title="Timeline"
                description="Every saved version, newest first. Promote any of them; labels point at one each."
              />
              <ol className="divide-y divide-slate-100" aria-label="Versions">
                {list.map((version) => (
                  <VersionRow
                    key={version.id}
                    version={version}
                    production={production}
                    onPromote={() => setDialog({ kind: "promote", version })}
                    onCompare={() => compareWith(version)}
                    onAddLabel={() => setDialog({ kind: "label", version })}
                    onRemoveLabel={(name) => setDialog({ kind: "unlabel", name, version: version.version })}
                  />
                ))}
              </ol>
            </Card>

            <Card className="min-w-0 xl:col-span-3" id="compare-versions">
              <CardHeader
                title="Compare"
                description="What changes between two versions: their texts line by line, their model settings side by side."
                actions={<LayoutToggle value={layout} onChange={setLayout} />}
              />
              <CardBody className="space-y-4">
                <div className="grid gap-3 sm:grid-cols-[1fr_auto_1fr] sm:items-end sm:gap-2">
                  <SelectField
                    label="From"
                    value={String(fromNumber)}
                    options={list.map((v) => ({ value: String(v.version), label: versionOption(v) }))}
                    onChange={(event) => setComparison([Number(event.target.value), toNumber])}
                  />
                  <ArrowRight className="mb-3 hidden size-4 text-slate-400 sm:block" aria-hidden="true" />
                  <SelectField
                    label="To"
                    value={String(toNumber)}
                    options={list.map((v) => ({ value: String(v.version), label: versionOption(v) }))}
                    onChange={(event) => setComparison([fromNumber, Number(event.target.value)])}
                  />
                </div>
                {from && to ? (
                  <VersionDiff from={from} to={to} layout={layout} />
                ) : (
                  <p className="text-sm text-slate-500">Pick two versions to compare.</p>
                )}
              </CardBody>
            </Card>
          </div>

          <LabelHistory moves={labels.data?.moves} error={labels.error} loading={labels.isPending} />
        </div>
      )}

      {dialog?.kind === "promote" || dialog?.kind === "rollback" ? (
        <PromoteDialog
          key={`${dialog.kind}-${dialog.version.version}`}
          promptId={config.id}
          target={dialog.version}
          production={productionVersion}
          rollback={dialog.kind === "rollback"}
          open
          onOpenChange={(open) => !open && setDialog(null)}
        />
      ) : null}
      {dialog?.kind === "label" && (
        <AddLabelDialog
          promptId={config.id}
          version={dialog.version}
          labels={labels.data?.labels ?? config.labels}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "unlabel" && (
        <RemoveLabelDialog
          promptId={config.id}
          name={dialog.name}
          version={dialog.version}
          onClose={() => setDialog(null)}
        />
      )}
    </>
  );
}

function versionOption(version: PromptVersion): string {
  const labels = version.labels.filter((name) => name === "production" || name === "latest");
  return `v${version.version}${labels.length ? ` (${labels.join(", ")})` : ""}`;
}

/** Where production and latest point, and the two moves a creator makes most: release and roll back. */
function ReleaseSummary({
  application,
  production,
  latest,
  rollbackTo,
  onPromote,
  onRollback,
}: {
  application: Application;
  production: PromptVersion | undefined;
  latest: PromptVersion | undefined;
  rollbackTo: PromptVersion | undefined;
  onPromote: (version: PromptVersion) => void;
  onRollback: (version: PromptVersion) => void;
}) {
  const ahead = latest && production && latest.version !== production.version;
  return (
    <section
      aria-label="Release"
      className="flex flex-col gap-4 rounded-xl border border-slate-200 bg-white p-5 shadow-sm shadow-slate-900/5 md:flex-row md:items-center md:justify-between"
    >
      <div className="min-w-0 space-y-1">
        <p className="flex flex-wrap items-center gap-2 text-sm text-slate-900">
          <Badge tone="green">production</Badge>
          <span>
            Callers get <strong>v{production?.version ?? "?"}</strong>
            {production && <span className="text-slate-500"> · {production.model}</span>}
          </span>
        </p>
        <p className="text-sm text-slate-600">
          {ahead ? (
            <>
              You saved <strong>v{latest.version}</strong> since; callers do not get it until you promote it.
            </>
          ) : application.status === "live" ? (
            "The latest version is in production."
          ) : (
            "This app is a draft: every save goes to production (nobody calls it yet)."
          )}
        </p>
      </div>
      <div className="flex flex-wrap gap-2">
        {rollbackTo && (
          <Button variant="secondary" onClick={() => onRollback(rollbackTo)}>
            <RotateCcw className="size-4" aria-hidden="true" />
            Roll back to v{rollbackTo.version}
          </Button>
        )}
        {ahead && (
          <Button onClick={() => onPromote(latest)}>
            <Rocket className="size-4" aria-hidden="true" />
            Promote v{latest.version}
          </Button>
        )}
      </div>
    </section>
  );
}

function LabelChip({ name, onRemove }: { name: string; onRemove?: () => void }) {
  const tone = name === "production" ? "green" : name === "latest" ? "blue" : "brand";
  return (
    <Badge tone={tone} className={cn("gap-1", name === "production" && "font-semibold")}>
      {name === "production" && <Rocket className="size-3" aria-hidden="true" />}
      {name}
      {onRemove && (
        <button
          type="button"
          onClick={onRemove}
          aria-label={`Remove label ${name}`}
          className="-mr-1 rounded p-0.5 hover:bg-brand-100 focus-visible:outline-2 focus-visible:outline-brand-600"
        >
          <X className="size-3" aria-hidden="true" />
        </button>
      )}
    </Badge>
  );
}

function VersionRow({
  version,
  production,
  onPromote,
  onCompare,
  onAddLabel,
  onRemoveLabel,
}: {
  version: PromptVersion;
  production: number;
  onPromote: () => void;
  onCompare: () => void;
  onAddLabel: () => void;
  onRemoveLabel: (name: string) => void;
}) {
  const isProduction = version.version === production;
  const labels = [...version.labels].sort(
    (a, b) => Number(b === "production") - Number(a === "production") || a.localeCompare(b),
  );
  return (
    <li
      aria-label={`Version ${version.version}`}
      className={cn("relative px-5 py-4", isProduction && "bg-green-50/60")}
    >
      {isProduction && <span className="absolute inset-y-0 left-0 w-1 bg-green-500" aria-hidden="true" />}
      <div className="flex items-start gap-3">
        <span
          className={cn(
            "mt-0.5 inline-flex h-7 min-w-10 shrink-0 items-center justify-center rounded-md px-2 font-mono text-sm font-semibold",
            isProduction ? "bg-green-600 text-white" : "bg-slate-100 text-slate-700",
          )}
        >
          v{version.version}
        </span>
        <div className="@container min-w-0 flex-1 space-y-1.5">
          <p className="text-sm font-medium break-words text-slate-900">
            {version.changelog || "No changelog"}
          </p>
          {labels.length > 0 && (
            <div className="flex flex-wrap gap-1.5">
              {labels.map((name) => (
                <LabelChip
                  key={name}
                  name={name}
                  onRemove={BUILT_IN_LABELS.has(name) ? undefined : () => onRemoveLabel(name)}
                />
              ))}
            </div>
          )}
          <p className="text-xs text-slate-500">
            {/* No author: the starter version the app was created with, or an account since deleted. */}
            {version.author_name && `${version.author_name} · `}
            {formatDateTime(version.created_at)} ·<span className="font-mono">{version.model}</span>
          </p>
          {/* One line however narrow the row (a phone, or the timeline's column beside Compare): by
              the row's own width, "Promote" alone and the two lesser actions as their icons (their
              names stay, for screen readers and as tooltips). */}
          <div className="flex flex-wrap gap-1.5 pt-1">
            {!isProduction && (
              <Button size="sm" variant="secondary" onClick={onPromote} aria-label="Promote to production">
                <Rocket className="size-4" aria-hidden="true" />
                <span>
                  Promote<span className="sr-only @xs:not-sr-only"> to production</span>
                </span>
              </Button>
            )}
            <Button
              size="sm"
              variant="ghost"
              onClick={onCompare}
              aria-label={`Compare v${version.version}`}
              title={`Compare v${version.version}`}
            >
              <GitCompare className="size-4" aria-hidden="true" />
              <span className="sr-only @md:not-sr-only">Compare</span>
            </Button>
            <Button
              size="sm"
              variant="ghost"
              onClick={onAddLabel}
              aria-label={`Add a label to v${version.version}`}
              title={`Add a label to v${version.version}`}
            >
              <Tag className="size-4" aria-hidden="true" />
              <span className="sr-only @md:not-sr-only">Label</span>
            </Button>
          </div>
        </div>
      </div>
    </li>
  );
}

function LayoutToggle({ value, onChange }: { value: DiffLayout; onChange: (layout: DiffLayout) => void }) {
  const options: [DiffLayout, string][] = [
    ["split", "Side by side"],
    ["unified", "Unified"],
  ];
  return (
    <fieldset className="inline-flex rounded-lg border border-slate-300 bg-white p-0.5 shadow-sm">
      <legend className="sr-only">Diff layout</legend>
      {options.map(([layout, label]) => (
        <button
          key={layout}
          type="button"
          aria-pressed={value === layout}
          onClick={() => onChange(layout)}
          className={cn(
            "h-7 rounded-md px-2.5 text-xs font-medium transition-colors",
            "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600",
            value === layout ? "bg-brand-600 text-white" : "text-slate-600 hover:bg-slate-100",
          )}
        >
          {label}
        </button>
      ))}
    </fieldset>
  );
}

function moveText(move: LabelMove): string {
  if (move.from_version === null) return `set on v${move.to_version}`;
  if (move.to_version === null) return `removed from v${move.from_version}`;
  return `v${move.from_version} → v${move.to_version}`;
}

/** Every move of a label (releases, rollbacks, the creator's own labels): who, from → to, why, when. */
function LabelHistory({
  moves,
  error,
  loading,
}: {
  moves: LabelMove[] | undefined;
  error: Error | null;
  loading: boolean;
}) {
  return (
    <Card>
      <CardHeader title="Label history" description="Releases, rollbacks and label changes, newest first." />
      {loading ? (
        <LoadingState label="Loading label history..." className="py-8" />
      ) : error ? (
        <CardBody>
          <ErrorBox message={getErrorMessage(error)} />
        </CardBody>
      ) : !moves || moves.length === 0 ? (
        <EmptyState
          framed={false}
          icon={History}
          title="No label moves yet"
          description="Promoting a version, rolling back or labelling one is recorded here."
        />
      ) : (
        <ol className="divide-y divide-slate-100" aria-label="Label moves">
          {moves.map((move) => (
            <li key={move.id} className="grid gap-1 px-5 py-3 text-sm sm:grid-cols-[12rem_1fr_auto] sm:gap-4">
              <p className="flex flex-wrap items-center gap-2">
                <LabelChip name={move.name} />
                <span className="font-mono text-xs text-slate-700">{moveText(move)}</span>
              </p>
              <p className="min-w-0 break-words text-slate-700">
                {move.reason || <span className="text-slate-400">No reason given</span>}
              </p>
              <p className="text-xs text-slate-500 sm:text-right">
                {move.actor_name ?? "Promptmint"} · {formatDateTime(move.created_at)}
              </p>
            </li>
          ))}
        </ol>
      )}
    </Card>
  );
}

function AddLabelDialog({
  promptId,
  version,
  labels,
  onClose,
}: {
  promptId: string;
  version: PromptVersion;
  labels: { name: string; version: number }[];
  onClose: () => void;
}) {
  const move = useMoveLabel(promptId);
  const [name, setName] = useState(version.labels.includes("staging") ? "" : "staging");
  const [problem, setProblem] = useState<string>();
  const existing = labels.find((label) => label.name === name);
  const hint =
    existing && existing.version !== version.version
      ? `Moves ${name} from v${existing.version} to v${version.version}.`
      : "Lowercase letters, digits and dashes, e.g. staging or canary. Callers pin it with Promptmint-Version.";

  const submit = () => {
    const parsed = NewLabelNameSchema.safeParse(name);
    if (!parsed.success)
      return setProblem(
        /^v-?\d+$/.test(name)
          ? "A label may not look like a version (v12): callers pinning it would get that version"
          : "Use lowercase letters, digits and dashes, starting with a letter (at most 32)",
      );
    if (BUILT_IN_LABELS.has(name)) {
      return setProblem(
        name === "production" ? "Use Promote to production to move production" : "latest follows every save",
      );
    }
    move.mutate(
      { name, version: version.version },
      {
        onSuccess: () => {
          toast.success(`${name} now points at v${version.version}`);
          onClose();
        },
      },
    );
  };

  return (
    <ConfirmDialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Label v${version.version}`}
      description="A label names a version callers can pin, such as staging for your own tests."
      confirmLabel="Set label"
      busyLabel="Saving..."
      confirmVariant="primary"
      busy={move.isPending}
      onConfirm={submit}
    >
      <div className="mt-4 space-y-3">
        <TextField
          label="Label name"
          value={name}
          maxLength={32}
          autoComplete="off"
          spellCheck={false}
          error={problem}
          hint={hint}
          onChange={(event) => {
            setName(event.target.value.toLowerCase());
            setProblem(undefined);
          }}
        />
        {move.isError && <Alert tone="error">{getErrorMessage(move.error)}</Alert>}
      </div>
    </ConfirmDialog>
  );
}

function RemoveLabelDialog({
  promptId,
  name,
  version,
  onClose,
}: {
  promptId: string;
  name: string;
  version: number;
  onClose: () => void;
}) {
  const remove = useRemoveLabel(promptId);
  return (
    <ConfirmDialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Remove the label ${name}?`}
      description={`It points at v${version}. Callers pinning ${name} will be refused until you set it again.`}
      confirmLabel="Remove label"
      busyLabel="Removing..."
      busy={remove.isPending}
      onConfirm={() =>
        remove.mutate(name, {
          onSuccess: () => {
            toast.success(`Label ${name} removed`);
            onClose();
          },
        })
      }
    >
      {remove.isError && (
        <Alert tone="error" className="mt-4">
          {getErrorMessage(remove.error)}
        </Alert>
      )}
    </ConfirmDialog>
  );
}
