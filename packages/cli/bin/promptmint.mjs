#!/usr/bin/env node
// Promptmint from the command line (docs/decisions/078). Plain Node (22+), no dependencies:
//
//   promptmint eval <app-slug> --version v7 [--url https://host] [--key pm_…] [--json]
//                  [--judge-model gpt-4o-mini] [--confirm-cost <micro-dollars>]
//
// Runs the app's eval cases on the version through `POST /api/v1/apps/{slug}/evals/runs` with an
// API key of the app's owner (--key, else $PROMPTMINT_API_KEY or $PROMPTMINT_KEY), prints a table
// of the cases and the totals, and exits 0 when every case passed, 1 when any failed, 2 on a
// usage or HTTP error (its message names the problem).
import { parseArgs } from "node:util";

const USAGE = `Usage: promptmint eval <app-slug> --version <v7|7|label> [options]

Runs the app's eval cases on a version and exits 0 when every case passed, 1 when any failed,
2 on a usage or HTTP error.

Options:
  --version, -v <ref>       The version: a number (7), a pin (v7) or a label (production, staging)
  --url <url>               The Promptmint server (default: $PROMPTMINT_URL)
  --key <key>               An API key of the app's owner (default: $PROMPTMINT_API_KEY, $PROMPTMINT_KEY)
  --judge-model <model>     The model that judges rubric assertions (default: the version's own)
  --confirm-cost <micros>   The most the run may cost, in micro-dollars (1000000 = $1): needed when
                            the estimate is above $1 or above your wallet
  --json                    Print the finished run as JSON instead of a table
  --help, -h                Show this help`;

/** A usage or HTTP problem: exit 2 with its message. */
class Problem extends Error {}

const dollars = (micros) => {
  const value = micros / 1_000_000;
  return `$${value.toFixed(Math.abs(value) > 0 && Math.abs(value) < 0.0001 ? 6 : 4)}`;
};

function parse(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        version: { type: "string", short: "v" },
        url: { type: "string" },
        key: { type: "string" },
        "judge-model": { type: "string" },
        "confirm-cost": { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    throw new Problem(`${error.message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [command, slug, ...rest] = positionals;
  if (command !== "eval")
    throw new Problem(`${command ? `unknown command '${command}'` : "no command"}\n\n${USAGE}`);
  if (!slug) throw new Problem(`no app: name the app's slug (promptmint eval <app-slug> --version v7)`);
  if (rest.length > 0) throw new Problem(`unexpected argument '${rest[0]}'`);
  if (!values.version) throw new Problem("no version: pass --version (v7, 7 or a label such as production)");
  const url = values.url ?? process.env.PROMPTMINT_URL;
  if (!url) throw new Problem("no server: pass --url https://your-promptmint-host or set PROMPTMINT_URL");
  let base;
  try {
    base = new URL(url);
  } catch {
    throw new Problem(`--url is not a URL: '${url}'`);
  }
  const key = values.key ?? process.env.PROMPTMINT_API_KEY ?? process.env.PROMPTMINT_KEY;
  if (!key)
    throw new Problem("no API key: pass --key or set PROMPTMINT_API_KEY (an API key of the app's owner)");
  let confirmCost;
  if (values["confirm-cost"] !== undefined) {
    confirmCost = Number(values["confirm-cost"]);
    if (!Number.isInteger(confirmCost) || confirmCost < 0)
      throw new Problem("--confirm-cost must be a whole number of micro-dollars (1000000 = $1)");
  }
  const version = /^[0-9]+$/.test(values.version) ? Number(values.version) : values.version;
  return { slug, version, base, key, judgeModel: values["judge-model"], confirmCost, json: values.json };
}

async function run(options) {
  const endpoint = new URL(
    `api/v1/apps/${encodeURIComponent(options.slug)}/evals/runs`,
    `${options.base.href.replace(/\/?$/, "/")}`,
  );
  const body = { version: options.version, wait: true };
  if (options.judgeModel !== undefined) body.judge_model = options.judgeModel;
  if (options.confirmCost !== undefined) body.confirm_cost_micros = options.confirmCost;
  let response;
  try {
    response = await fetch(endpoint, {
      method: "POST",
      headers: {
        authorization: `Bearer ${options.key}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new Problem(`cannot reach ${options.base.origin}: ${error.cause?.message ?? error.message}`);
  }
  const text = await response.text();
  let answer;
  try {
    answer = text ? JSON.parse(text) : undefined;
  } catch {
    answer = undefined;
  }
  if (response.status !== 201) {
    const message = answer?.message ?? answer?.detail ?? (text.slice(0, 300) || response.statusText);
    const fields = answer?.fields ? Object.entries(answer.fields).map(([f, p]) => `  ${f}: ${p}`) : [];
    const hint =
      answer?.fields?.confirm_cost_micros !== undefined
        ? ["Pass --confirm-cost <micro-dollars> of at least the estimate to run it."]
        : response.status === 401
          ? ["Check the API key (--key or PROMPTMINT_API_KEY)."]
          : response.status === 404
            ? [`No app '${options.slug}' of the key's owner on ${options.base.origin}.`]
            : [];
    throw new Problem([`HTTP ${response.status}: ${message}`, ...fields, ...hint].join("\n"));
  }
  return answer;
}

function printTable(result) {
  const rows = result.run.results ?? [];
  const detailOf = (r) =>
    r.error ??
    r.assertion_results
      .filter((a) => !a.passed)
      .map((a) => `${a.kind}: ${a.detail}`)
      .join("; ");
  const table = [
    ["CASE", "RESULT", "COST", "LATENCY", "DETAIL"],
    ...rows.map((r) => [
      r.case_name,
      r.passed ? "pass" : "FAIL",
      dollars(r.cost_micros + r.judge_cost_micros),
      `${r.latency_ms} ms`,
      r.passed ? "" : detailOf(r),
    ]),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.min(48, Math.max(...table.map((row) => row[i].length))));
  const cell = (text, i) =>
    text.length > widths[i] ? `${text.slice(0, widths[i] - 1)}…` : text.padEnd(widths[i]);
  for (const row of table)
    console.log([0, 1, 2, 3].map((i) => cell(row[i], i)).join("  ") + `  ${row[4]}`.trimEnd());
  const version = `v${result.version}${result.label ? ` (${result.label})` : ""}`;
  const { run } = result;
  console.log("");
  console.log(
    `${result.app.slug} ${version}: ${run.passed}/${run.cases} passed, ${run.cases - run.passed} failed · cost ${dollars(result.total_cost_micros)} · ${result.passed ? "PASSED" : "FAILED"}`,
  );
  console.log(result.url);
}

async function main(argv) {
  const options = parse(argv);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const result = await run(options);
  if (options.json) console.log(JSON.stringify(result, null, 2));
  else printTable(result);
  return result.passed ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`promptmint: ${error instanceof Problem ? error.message : (error?.stack ?? error)}`);
    process.exitCode = 2;
  },
);
