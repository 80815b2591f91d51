import { IoSchemaSchema } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import { prompts } from "../../db/schema/index.ts";
import type { ReleaseKind } from "../releases/release-kinds.ts";
import { refuseUncoveredPrice } from "./cost-guard.ts";
import { refuseUnevaluatedRelease } from "./eval-gate.ts";
import { loadPrompt, promptVersionOf } from "./load-prompt.ts";
import { restorePromptVersion, toVersion, versionCostSettings } from "./prompts.service.ts";

/**
 * A prompt app's side of its releases (docs/decisions/075): arms must take the same inputs; a
 * version that will serve paid calls passes the price guard and, when the creator requires it,
 * a passing eval run (decision 059).
 */
export const promptReleaseKind: ReleaseKind = {
  kind: "prompt",
  noun: "Prompt",
  lookups: ["prompts"],
  armProblems(arms, byNumber) {
    // A caller's inputs valid on one arm must not be refused by another.
    const problems: Record<string, string> = {};
    const schemaOf = (version: number) => {
      const row = byNumber.get(version);
      return row ? promptVersionOf(row).inputSchema : null;
    };
    const firstVersion = arms[0]?.version ?? 0;
    arms.forEach((arm, i) => {
      if (i > 0 && JSON.stringify(schemaOf(arm.version)) !== JSON.stringify(schemaOf(firstVersion)))
        problems[`arms.${i}.version`] =
          `v${arm.version} takes other inputs than v${firstVersion} (its input_schema differs): callers of one arm would be refused by the other`;
    });
    return problems;
  },
  async guardServing(db, app, stored, feePercent) {
    const version = promptVersionOf(stored);
    await refuseUncoveredPrice(db, {
      app,
      feePercent,
      settings: await versionCostSettings(db, app, version),
    });
    // Production was released already; any other version is released to its callers by this.
    const { prompt } = await loadPrompt(db, app);
    await refuseUnevaluatedRelease(db, prompt, version);
  },
  async gate(tx, app, version, { publishing }) {
    const { prompt } = await loadPrompt(tx, app);
    await refuseUnevaluatedRelease(tx, prompt, version, { publishing });
  },
  async afterProduction() {},
  inputSchemaOf(row) {
    const schema = promptVersionOf(row).inputSchema;
    return IoSchemaSchema.parse(schema ?? { type: "object", properties: {}, required: [] });
  },
  outputSchemaOf(row) {
    const schema = promptVersionOf(row).outputSchema;
    return schema ? IoSchemaSchema.parse(schema) : null;
  },
  // A rubric is judged on the version's own model unless the run names another.
  judgeModelOf: (row) => promptVersionOf(row).model,
  async requiresPassingEval(db, app) {
    const [row] = await db
      .select({ required: prompts.requirePassingEval })
      .from(prompts)
      .where(eq(prompts.applicationId, app.id));
    return row?.required ?? false;
  },
  async setRequirePassingEval(db, app, required) {
    await db.update(prompts).set({ requirePassingEval: required }).where(eq(prompts.applicationId, app.id));
  },
  listedVersion(version, { production, labels, author }) {
    return toVersion(promptVersionOf(version), production?.id ?? null, labels, author);
  },
  restore: restorePromptVersion,
};
