import { ArrowRight } from "lucide-react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { cn } from "../../lib/cn";
import type { AppKind } from "../../lib/releases/app-ref";
import type { AppVersion } from "../../lib/releases/versions";
import { type DiffLayout, VersionDiff } from "./version-diff";

/** The pair a diff opens with: production against the latest, or the latest against the one before. */
export function defaultComparison(
  versions: Pick<AppVersion, "version">[],
  production: number,
): [number, number] {
  const latest = versions[0]?.version ?? production;
  if (latest !== production) return [production, latest];
  const before = versions[1]?.version;
  return [before ?? latest, latest];
}

function versionOption(version: AppVersion): string {
  const labels = version.labels.filter((name) => name === "production" || name === "latest");
  return `v${version.version}${labels.length ? ` (${labels.join(", ")})` : ""}`;
}

/** Two versions picked From and To, and everything that differs between them. */
export function VersionCompare({
  kind,
  versions,
  pair: [fromNumber, toNumber],
  onPairChange,
  layout,
  onLayoutChange,
}: {
  kind: AppKind;
  versions: AppVersion[];
  pair: [number, number];
  onPairChange: (pair: [number, number]) => void;
  layout: DiffLayout;
  onLayoutChange: (layout: DiffLayout) => void;
}) {
  const byNumber = new Map(versions.map((version) => [version.version, version]));
  const from = byNumber.get(fromNumber);
  const to = byNumber.get(toNumber);
  const options = versions.map((v) => ({ value: String(v.version), label: versionOption(v) }));
  return (
    <Card className="min-w-0 xl:col-span-3" id="compare-versions">
      <CardHeader
        title="Compare"
        description={
          kind === "prompt"
            ? "What changes between two versions: their texts line by line, their model settings side by side."
            : "What changes between two versions: provider, its settings (secrets only as changed or not), timeout, iterations and logging."
        }
        actions={kind === "prompt" ? <LayoutToggle value={layout} onChange={onLayoutChange} /> : undefined}
      />
      <CardBody className="space-y-4">
        <div className="grid gap-3 sm:grid-cols-[1fr_auto_1fr] sm:items-end sm:gap-2">
          <SelectField
            label="From"
            value={String(fromNumber)}
            options={options}
            onChange={(event) => onPairChange([Number(event.target.value), toNumber])}
          />
          <ArrowRight className="mb-3 hidden size-4 text-slate-400 sm:block" aria-hidden="true" />
          <SelectField
            label="To"
            value={String(toNumber)}
            options={options}
            onChange={(event) => onPairChange([fromNumber, Number(event.target.value)])}
          />
        </div>
        {from && to ? (
          <VersionDiff from={from} to={to} layout={layout} />
        ) : (
          <p className="text-sm text-slate-500">Pick two versions to compare.</p>
        )}
      </CardBody>
    </Card>
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
