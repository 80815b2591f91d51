import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { fundWallet } from "../caller.ts";
import { scriptDirective } from "../fake-openai.ts";
import { type Attack, journalEvent, pickApp, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";
import type { AttackApp } from "./world.ts";

/**
 * Calls no price pays for (issue 37, docs/decisions/062), made by the creator while the attack
 * runs: Test Prompt, eval runs (each case and rubric judge a vendor call), and top-ups of the
 * creator's wallet, which starts empty: the creator's own calls are refused (402) until a top-up,
 * then paid from the wallet until it runs dry again. The creator's own gateway calls are the
 * attack's other calls with the creator as payer (attack.ts `pickPayer`). Judged after the run
 * (`creatorCallViolations`): every model cost of such a call was taken from its creator's
 * wallet by its hold, never left to the sweep, and never became debt (reconcile checks the
 * holds' postings: `mismatchedModelCostHolds`, `usageDebts`).
 */

/** The apps an eval case was added to (one case each, with a rubric). */
const evalPrompts = new WeakMap<Attack, Map<string, Promise<{ promptId: string; version: number } | null>>>();

export async function creatorTopUp(attack: Attack, prng: Prng, actor: number) {
  const { creator } = attack.world;
  const cents = prng.int(100, 150);
  const window: { from: number; to?: number } = { from: Date.now() };
  attack.topUps.set(creator.id, [...(attack.topUps.get(creator.id) ?? []), window]);
  await journalEvent(attack, actor, "top_up", async () => {
    try {
      await fundWallet(viaAnyNode(attack, prng, creator), cents);
      return { status: 200, detail: { payer: creator.name, cents } };
    } finally {
      window.to = Date.now();
    }
  });
}

export async function testPrompt(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng, "prompt");
  const directive = scriptDirective({ delayMs: prng.int(20, 200), gapMs: 0, words: prng.int(3, 20) });
  await journalEvent(attack, actor, "test_prompt", async () => {
    const answer = await viaAnyNode(attack, prng, attack.world.creator).api(
      "POST",
      `/api/app/${app.slug}/prompt/test-config/`,
      { body: { prompt_template: `Test {{query}} ${directive}`, test_inputs: { query: "attack" } } },
    );
    return {
      status: answer.status,
      detail: {
        app: app.label,
        invocation: answer.body?.run?.invocation_id ?? null,
        code: answer.body?.code,
      },
    };
  });
}

export async function evalRun(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng, "prompt");
  await journalEvent(attack, actor, "eval_run", async () => {
    const prompt = await evalPromptOf(attack, prng, app);
    if (!prompt) return { status: 404, detail: { app: app.label } };
    const answer = await viaAnyNode(attack, prng, attack.world.creator).api(
      "POST",
      `/api/prompts/${prompt.promptId}/evals/runs`,
      // Confirmed whatever the estimate: the run is bounded by the wallet call by call.
      { body: { version: prompt.version, judge_model: "gpt-4o-mini", confirm_cost_micros: 1_000_000_000 } },
    );
    return {
      status: answer.status,
      detail: { app: app.label, run: answer.body?.id, code: answer.body?.code },
    };
  });
}

/** The app's prompt with its eval case (added the first time), or null when the app is gone. */
function evalPromptOf(attack: Attack, prng: Prng, app: AttackApp) {
  let prompts = evalPrompts.get(attack);
  if (!prompts) {
    prompts = new Map();
    evalPrompts.set(attack, prompts);
  }
  let prompt = prompts.get(app.id);
  if (!prompt) {
    prompt = (async () => {
      const creator = viaAnyNode(attack, prng, attack.world.creator);
      const config = await creator.api("GET", `/api/app/${app.slug}/prompt/`);
      if (config.status !== 200) return null;
      const promptId = config.body.id as string;
      const added = await creator.api("POST", `/api/prompts/${promptId}/evals/cases`, {
        body: {
          name: "Attack case",
          inputs: { query: `eval ${scriptDirective({ delayMs: 50, gapMs: 0, words: 8 })}` },
          assertions: [{ kind: "rubric", rubric: "answers politely" }],
        },
      });
      return added.status === 201 ? { promptId, version: config.body.current_version as number } : null;
    })();
    // A step a kill cut off is tried again by the next eval run of the app.
    const tried = prompt;
    tried.catch(() => prompts.get(app.id) === tried && prompts.delete(app.id));
    prompts.set(app.id, prompt);
  }
  return prompt;
}

/**
 * After the run: every call of the creator's own apps that no price paid for (their own calls,
 * tests and evals) and that cost the platform a vendor call had its model cost taken from the
 * creator's wallet by its hold: a model cost hold of the same id, posted. (That no such posting
 * made debt is reconcile's `usageDebts`. A plan-covered call's model cost still comes from
 * earnings by the sweep, and can still make debt after a payout: decision 062, "Not covered".)
 */
export async function creatorCallViolations(db: Database): Promise<{ kind: string; example: string }[]> {
  const unprepaid = await queryRows<{ id: string; cost: string }>(
    db,
    sql`select i.id::text, (i.model_cost_micros - i.model_cost_deducted_micros)::text as cost
        from invocations i join applications a on a.id = i.application_id
        left join model_cost_holds h on h.id = i.id
        where i.caller_user_id = a.owner_id and i.model_cost_micros > i.model_cost_deducted_micros
          and (h.id is null or h.status = 'held' or i.model_cost_posted_at is null)
        limit 20`,
  );
  return [
    ...unprepaid.map((row) => ({
      kind: "a creator's call's model cost not prepaid",
      example: `${row.id} ${row.cost} µ$`,
    })),
  ];
}
