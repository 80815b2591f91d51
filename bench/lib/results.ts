/** What every benchmark shares: the machine line, the commit, and its own section of RESULTS.md. */
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const resultsFile = path.resolve(import.meta.dirname, "..", "RESULTS.md");

export function sh(cmd: string): string {
  try {
    return execSync(cmd, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "(unavailable)";
  }
}

/** "2 CPU cores (AMD EPYC), 23 GB RAM; Node v24…; commit abc1234" — for the header of a section. */
export function machineSummary(): string {
  const gb = Math.round(os.totalmem() / 1024 ** 3);
  const commit = sh("git rev-parse --short HEAD");
  const dirty = sh("git status --porcelain") ? " + uncommitted changes" : "";
  return `${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? "?"}), ${gb} GB RAM; Node ${process.version}; commit ${commit}${dirty}`;
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");
}

/**
 * Replaces only the section under `heading`, up to the next `## ` or `### ` heading, so every
 * benchmark shares RESULTS.md and hand-written `### ` notes below a section survive a rerun.
 */
export function writeResultsSection(heading: string, section: string): void {
  let text: string;
  try {
    text = readFileSync(resultsFile, "utf8");
  } catch {
    text = "# Benchmark results\n\n";
  }
  const start = text.indexOf(heading);
  if (start === -1) text = `${text.trimEnd()}\n\n${section}`;
  else {
    const rest = text.slice(start + heading.length);
    const next = rest.search(/\n###? /);
    text = text.slice(0, start) + section + (next === -1 ? "" : `\n${rest.slice(next + 1)}`);
  }
  writeFileSync(resultsFile, `${text.trimEnd()}\n`);
}
