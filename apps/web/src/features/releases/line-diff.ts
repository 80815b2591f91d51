/** One line of a diff: kept in both, only in the old text (removed), only in the new (added). */
export interface DiffLine {
  kind: "same" | "removed" | "added";
  text: string;
  /** 1-based line numbers in the old and the new text (null on the side the line is not in). */
  oldLine: number | null;
  newLine: number | null;
}

/** Beyond this many cells of the LCS table, the changed middle is shown as replaced wholesale. */
const MAX_CELLS = 4_000_000;

function linesOf(text: string): string[] {
  return text === "" ? [] : text.replace(/\r\n/g, "\n").split("\n");
}

/**
 * A line diff of two texts by longest common subsequence. The common head and tail are matched
 * first, so a small edit of a long prompt costs only its changed middle; removed lines come
 * before the added ones that replace them.
 */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = linesOf(oldText);
  const b = linesOf(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);

  const result: DiffLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  const same = (text: string) => result.push({ kind: "same", text, oldLine: oldLine++, newLine: newLine++ });
  const removed = (text: string) => result.push({ kind: "removed", text, oldLine: oldLine++, newLine: null });
  const added = (text: string) => result.push({ kind: "added", text, oldLine: null, newLine: newLine++ });

  for (const text of a.slice(0, head)) same(text);
  for (const step of middleSteps(midA, midB)) {
    if (step.kind === "same") same(step.text);
    else if (step.kind === "removed") removed(step.text);
    else added(step.text);
  }
  for (const text of a.slice(a.length - tail)) same(text);
  return result;
}

function middleSteps(a: string[], b: string[]): { kind: DiffLine["kind"]; text: string }[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) {
    return [
      ...a.map((text) => ({ kind: "removed" as const, text })),
      ...b.map((text) => ({ kind: "added" as const, text })),
    ];
  }
  // lengths[i][j]: the LCS of a[i..] and b[j..], in one flat array.
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  const steps: { kind: DiffLine["kind"]; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      steps.push({ kind: "same", text: a[i] as string });
      i++;
      j++;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      steps.push({ kind: "removed", text: a[i++] as string });
    } else {
      steps.push({ kind: "added", text: b[j++] as string });
    }
  }
  while (i < n) steps.push({ kind: "removed", text: a[i++] as string });
  while (j < m) steps.push({ kind: "added", text: b[j++] as string });
  return steps;
}

/** A row of the side-by-side view: the old line on the left, the new on the right. */
export interface SideBySideRow {
  left: DiffLine | null;
  right: DiffLine | null;
}

/** Pairs each run of removed lines with the run of added lines after it, line by line. */
export function sideBySide(lines: DiffLine[]): SideBySideRow[] {
  const rows: SideBySideRow[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as DiffLine;
    if (line.kind === "same") {
      rows.push({ left: line, right: line });
      index++;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (lines[index]?.kind === "removed") removed.push(lines[index++] as DiffLine);
    while (lines[index]?.kind === "added") added.push(lines[index++] as DiffLine);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) {
      rows.push({ left: removed[k] ?? null, right: added[k] ?? null });
    }
  }
  return rows;
}

/** Whether a diff changes anything. */
export function hasChanges(lines: DiffLine[]): boolean {
  return lines.some((line) => line.kind !== "same");
}
