import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { MICROS_PER_CENT } from "../../modules/billing/money.ts";
import { type Attack, journalEvent, liveApps, pickApp, pickPayer, viaAnyNode } from "./attack.ts";
import type { CallPlan } from "./calls.ts";
import type { Journal } from "./journal.ts";
import { delivered, line } from "./judge.ts";
import { payForPlan, planCall } from "./paid-calls.ts";
import type { Prng } from "./prng.ts";

/**
 * Decision 063 in the money attack: a call's input is bounded by what it pays. Oversized calls
 * (a huge message in every style, a huge tools array or many tool results through the OpenAI
 * API) must be refused with 413 `input_too_large` and charge nothing; a dear version (gpt-4, 1000
 * tokens out) is saved and put in an experiment, and the price is cut under it: the cut must be
 * refused while the arm serves. The judge adds: no answered call's model cost exceeded the
 * creator's share of what it was charged.
 */

/** How an oversized call is made big: its message, its tools, or its tool results. */
export interface Oversize {
  kind: "message" | "tools" | "tool-results";
  bytes: number;
}

/** Bigger than any attack app's limit (gpt-4-turbo, 64 tokens out, at most 40¢: ~36,000 tokens). */
const MIN_BYTES = 60_000;
/** Below Fastify's 1 MiB body limit, so the refusal is ours, not the body parser's. */
const MAX_BYTES = 400_000;

/** An oversized call of a prompt app, in any style; the creator's own (free, unbounded) now and then. */
export async function oversizedCall(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng, "prompt");
  const style = prng.pick<CallPlan["style"]>(["dify", "openai", "responses", "mcp-app", "mcp-catalogue"]);
  const plan = planCall(prng, app, prng.chance(0.4), style);
  plan.upstream = { ...plan.upstream, fail: undefined };
  plan.oversize = {
    kind: style === "openai" ? prng.pick(["message", "tools", "tool-results"]) : "message",
    bytes: prng.int(MIN_BYTES, MAX_BYTES),
  };
  await payForPlan(attack, prng, actor, "oversized call", pickPayer(attack, prng), app, plan);
}

/** The request `plan.oversize` makes of an ordinary one (calls.ts requestOf). */
export function withOversize(plan: CallPlan, request: { path: string; body: object }, prompt: string) {
  const size = plan.oversize;
  if (!size) return request;
  const filler = " lorem".repeat(Math.ceil(size.bytes / 6));
  if (size.kind === "message")
    return { ...request, body: replacePrompt(request.body, prompt, `${prompt}${filler}`) };
  const body = request.body as Record<string, unknown>;
  if (size.kind === "tools") {
    const count = 100;
    const each = filler.slice(0, Math.ceil(size.bytes / count));
    return {
      ...request,
      body: {
        ...body,
        tools: Array.from({ length: count }, (_, i) => ({
          type: "function",
          function: { name: `tool_${i}`, description: each, parameters: { type: "object" } },
        })),
      },
    };
  }
  const count = 50;
  const calls = Array.from({ length: count }, (_, i) => ({
    id: `call_${i}`,
    type: "function",
    function: { name: "lookup", arguments: "{}" },
  }));
  return {
    ...request,
    body: {
      ...body,
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      messages: [
        { role: "user", content: prompt },
        { role: "assistant", content: null, tool_calls: calls },
        ...calls.map((call) => ({
          role: "tool",
          tool_call_id: call.id,
          content: filler.slice(0, Math.ceil(size.bytes / count)),
        })),
      ],
    },
  };
}

/** `body` with every string equal to `prompt` replaced by `bigger` (wherever the style puts it). */
function replacePrompt(body: unknown, prompt: string, bigger: string): object {
  const walk = (value: unknown): unknown => {
    if (value === prompt) return bigger;
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  return walk(body) as object;
}

/**
 * A dear version (gpt-4, 1000 tokens out: about 6¢ of worst case) saved on a live prompt app and
 * run as an experiment's arm beside production, then the price cut to 5¢ or 6¢: the cut must be
 * refused while the arm serves (decision 063). The experiment's arms are read before and after.
 */
export async function cutPriceUnderAnArm(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack).filter((candidate) => candidate.kind === "prompt"));
  if (!app || attack.busyApps.has(app.id)) return;
  attack.busyApps.add(app.id);
  const creator = viaAnyNode(attack, prng, attack.world.creator);
  const cents = prng.int(5, 6);
  const sentAt = Date.now();
  try {
    await journalEvent(attack, actor, "price", async () => {
      const config = await creator.api("GET", `/api/app/${app.slug}/prompt/`);
      if (config.status !== 200) return { status: config.status, detail: { app: app.label, step: "read" } };
      const promptId = config.body.id as string;
      const saved = await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
        body: { model: "gpt-4", max_tokens: 1000, system_prompt: `Dear variant ${prng.int(1, 1_000_000)}.` },
      });
      const dear = saved.status === 200 ? (saved.body.current_version as number) : undefined;
      const base = `/api/prompts/${promptId}/experiments/`;
      const production = config.body.production_version as number;
      if (dear !== undefined && dear !== production)
        await creator.api("POST", base, {
          body: {
            arms: [
              { version: production, percent: 50 },
              { version: dear, percent: 50 },
            ],
          },
        });
      const dearArmRuns = async () => {
        const running = (await creator.api("GET", base)).body?.running as
          | { arms: { version: number }[] }
          | null
          | undefined;
        return dear !== undefined && (running?.arms ?? []).some((arm) => arm.version === dear);
      };
      const before = await dearArmRuns();
      const answer = await creator
        .api("PATCH", `/api/app/${app.slug}/`, { body: { price_cents: cents } })
        .catch((error: unknown) => ({ status: 0, body: { error: String(error).slice(0, 200) } }));
      if (answer.status === 200) app.prices.push({ cents, sentAt, doneAt: Date.now() });
      else if (answer.status === 0 || answer.status >= 500)
        app.prices.push({ cents, sentAt, doneAt: Number.POSITIVE_INFINITY });
      const after = await dearArmRuns();
      return {
        status: answer.status,
        detail: {
          app: app.label,
          cents,
          dear,
          action: "cut under an arm",
          // Accepted while the dear arm served throughout: what decision 063 refuses.
          ...(answer.status === 200 && before && after ? { uncoveredArmAccepted: true } : {}),
          ...(answer.status >= 400 ? { message: String(answer.body?.message ?? "").slice(0, 200) } : {}),
        },
      };
    });
  } finally {
    attack.busyApps.delete(app.id);
  }
}

type Flag = (kind: string, example: string) => void;

/**
 * The journal's side: no oversized call of a consumer was answered (the creator's own calls are
 * free and not bounded), each 413 is `input_too_large`, and no price cut under a serving arm was
 * accepted. (Nothing charged for the refused ones is the judge's general rule: nothing but
 * delivered answers is charged.)
 */
export function judgeOversized(journal: Journal, flag: Flag): { refused: number; cuts: number } {
  let refused = 0;
  for (const call of journal.calls()) {
    if (!call.plan.oversize || call.owner) continue;
    if (delivered(call)) flag("an oversized input was answered", line(call));
    if (call.status === 413 && call.errorCode !== "input_too_large")
      flag("an oversized input's 413 is not input_too_large", line(call));
    if (call.status === 413) refused += 1;
  }
  let cuts = 0;
  for (const event of journal.events("price")) {
    if (event.detail.action !== "cut under an arm") continue;
    cuts += 1;
    if (event.detail.uncoveredArmAccepted)
      flag("a price cut was accepted under an arm it does not cover", JSON.stringify(event.detail));
  }
  return { refused, cuts };
}

/**
 * The database's side: no answered call paid from a wallet cost the platform more at the model
 * vendor than the creator's share of its charge (price less the fee).
 */
export async function judgeModelCosts(db: Database, feePercent: number, flag: Flag): Promise<void> {
  const rows = await queryRows<{ id: string; charged_cents: number; model_cost_micros: string }>(
    db,
    sql`select id, charged_cents, model_cost_micros::text from invocations
        where status = 'success' and charged_cents > 0
          and model_cost_micros * 100 > charged_cents::bigint * ${MICROS_PER_CENT} * (100 - ${feePercent})
        limit 20`,
  );
  for (const row of rows)
    flag(
      "an answered call's model cost exceeded the creator's share",
      `${row.id}: ${row.model_cost_micros} µ$ for ${row.charged_cents}¢`,
    );
}
