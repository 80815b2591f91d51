/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and
 * the share of time spent under each package or project folder.
 * Usage: node bench/gateway/profile.ts <file.cpuprofile> [top=30]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error("usage: node bench/gateway/profile.ts <file.cpuprofile> [top]");
const top = Number(process.argv[3] ?? 30);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (url: string) => {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const src = url.indexOf("/src/");
  return src >= 0 ? url.slice(src + 1) : url || "(native)";
};
const fns = new Map<string, number>();
const packages = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || "(anonymous)"}  ${where(url)}${url ? `:${lineNumber + 1}` : ""}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  const pkg = where(url);
  packages.set(pkg, (packages.get(pkg) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
console.log(`total sampled ${(total / 1e6).toFixed(2)} s\n\nTop self time:`);
for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
console.log("\nSelf time by package / file:");
for (const [k, us] of [...packages].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${k}`);
