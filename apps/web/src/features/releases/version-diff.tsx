import type { PromptVersion } from "@promptmint/contracts";
import { useMemo } from "react";
import { cn } from "../../lib/cn";
import { type SettingRow, settingRows } from "../../lib/releases/version-changes";
import { type AppVersion, isPromptVersion } from "../../lib/releases/versions";
import { type DiffLine, hasChanges, lineDiff, sideBySide } from "./line-diff";

export type DiffLayout = "split" | "unified";

function schemaText(schema: PromptVersion["input_schema"] | null): string {
  return schema ? JSON.stringify(schema, null, 2) : "";
}

/** The texts of a version that a diff compares, each as lines. */
const TEXT_SECTIONS = [
  ["System prompt", (version: PromptVersion) => version.system_prompt],
  ["Prompt template", (version: PromptVersion) => version.prompt_template],
  ["Input schema", (version: PromptVersion) => schemaText(version.input_schema)],
  ["Output schema", (version: PromptVersion) => schemaText(version.output_schema)],
] as const;

const lineTone: Record<DiffLine["kind"], string> = {
  same: "text-slate-700",
  removed: "bg-red-50 text-red-900",
  added: "bg-green-50 text-green-900",
};
const marker: Record<DiffLine["kind"], string> = { same: " ", removed: "−", added: "+" };

function LineNumber({ value }: { value: number | null }) {
  return (
    <span className="w-8 shrink-0 pr-2 text-right text-slate-400 select-none" aria-hidden="true">
      {value ?? ""}
    </span>
  );
}

function Line({ line, number }: { line: DiffLine | null; number: number | null }) {
  if (!line) return <div className="min-h-5 bg-slate-50" />;
  return (
    <div className={cn("flex min-h-5", lineTone[line.kind])}>
      <LineNumber value={number} />
      <span className="w-4 shrink-0 select-none" aria-hidden="true">
        {marker[line.kind]}
      </span>
      {line.kind !== "same" && (
        <span className="sr-only">{line.kind === "added" ? "Added: " : "Removed: "}</span>
      )}
      <span className="min-w-0 flex-1 break-words whitespace-pre-wrap">{line.text || " "}</span>
    </div>
  );
}

function TextDiff({ title, lines, layout }: { title: string; lines: DiffLine[]; layout: DiffLayout }) {
  const changed = hasChanges(lines);
  const added = lines.filter((line) => line.kind === "added").length;
  const removed = lines.filter((line) => line.kind === "removed").length;
  return (
    <section aria-label={title} className="overflow-hidden rounded-lg border border-slate-200">
      <header className="flex flex-wrap items-center justify-between gap-2 border-b border-slate-200 bg-slate-50 px-3 py-2">
        <h3 className="text-sm font-medium text-slate-800">{title}</h3>
        <span className="text-xs text-slate-500">
          {changed ? (
            <>
              <span className="text-green-700">+{added}</span>{" "}
              <span className="text-red-700">−{removed}</span>
            </>
          ) : (
            "No changes"
          )}
        </span>
      </header>
      {changed && (
        <div className="max-h-96 overflow-auto py-1 font-mono text-xs leading-5">
          {layout === "unified" ? (
            lines.map((line, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: lines of a diff have no identity but their place.
              <Line key={index} line={line} number={line.newLine ?? line.oldLine} />
            ))
          ) : (
            <div className="grid grid-cols-2 divide-x divide-slate-200">
              {sideBySide(lines).map((row, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows of a diff have no identity but their place.
                <div key={index} className="contents">
                  <Line line={row.left} number={row.left?.oldLine ?? null} />
                  <Line line={row.right} number={row.right?.newLine ?? null} />
                </div>
              ))}
            </div>
          )}
        </div>
      )}
    </section>
  );
}

/** The settings of both versions side by side; the rows that differ are marked. */
function SettingsDiff({
  title,
  rows,
  from,
  to,
}: {
  title: string;
  rows: SettingRow[];
  from: number;
  to: number;
}) {
  return (
    <section aria-label={title} className="overflow-hidden rounded-lg border border-slate-200">
      <table className="w-full text-sm">
        <caption className="sr-only">{title}</caption>
        <thead className="bg-slate-50 text-left text-xs font-medium text-slate-500">
          <tr>
            <th scope="col" className="px-3 py-2 text-sm font-medium text-slate-800">
              {title}
            </th>
            <th scope="col" className="px-3 py-2">
              v{from}
            </th>
            <th scope="col" className="px-3 py-2">
              v{to}
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((row) => (
            <tr
              key={row.key}
              className={row.changed ? "bg-amber-50" : undefined}
              data-changed={row.changed || undefined}
            >
              <th scope="row" className="px-3 py-1.5 text-left font-normal break-all text-slate-600">
                {row.label}
                {row.changed && <span className="sr-only"> (changed)</span>}
              </th>
              <td className={cn("px-3 py-1.5 text-xs break-all text-slate-700", !row.secret && "font-mono")}>
                {row.from}
              </td>
              <td
                className={cn(
                  "px-3 py-1.5 text-xs break-all",
                  !row.secret && "font-mono",
                  row.changed ? "font-semibold text-slate-900" : "text-slate-700",
                )}
              >
                {row.to}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * Everything that differs between two versions. A prompt's: its texts as line diffs and its model
 * settings as a table. A workflow's: provider, its configuration fields (a secret only as changed
 * or unchanged, never its value), timeout, iterations and logging.
 */
export function VersionDiff({ from, to, layout }: { from: AppVersion; to: AppVersion; layout: DiffLayout }) {
  const sections = useMemo(
    () =>
      isPromptVersion(from) && isPromptVersion(to)
        ? TEXT_SECTIONS.map(([title, text]) => ({ title, lines: lineDiff(text(from), text(to)) }))
        : [],
    [from, to],
  );
  const rows = useMemo(() => settingRows(from, to), [from, to]);
  const identical =
    sections.every((section) => !hasChanges(section.lines)) && rows.every((row) => !row.changed);
  return (
    <div className="space-y-4">
      {identical && (
        <p className="rounded-lg border border-dashed border-slate-300 px-4 py-3 text-sm text-slate-600">
          v{from.version} and v{to.version} are the same: nothing a call depends on differs.
        </p>
      )}
      {sections.map((section) => (
        <TextDiff key={section.title} title={section.title} lines={section.lines} layout={layout} />
      ))}
      <SettingsDiff
        title={isPromptVersion(from) ? "Model settings" : "Workflow settings"}
        rows={rows}
        from={from.version}
        to={to.version}
      />
    </div>
  );
}
