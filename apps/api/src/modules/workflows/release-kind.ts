import { invalidFields } from "../../lib/errors.ts";
import { FALLBACK_JUDGE_MODEL } from "../releases/online-evals.ts";
import type { ReleaseKind } from "../releases/release-kinds.ts";
import { versionById } from "../releases/versions.ts";
import { workflowVersionOf } from "./workflow-payload.ts";
import { restoreWorkflowVersion, syncApplicationProviderFields, toVersion } from "./workflows.service.ts";

/**
 * A workflow app's side of its releases (docs/decisions/060, 075): an arm needs a provider to
 * call; its cost is the provider's (not metered by us), so nothing guards its serving; the app's
 * own provider fields (its App ID and masked key) follow `production`.
 */
export const workflowReleaseKind: ReleaseKind = {
  kind: "workflow",
  noun: "Workflow",
  // The app's own provider fields follow production, and the running experiment is cached with
  // the prompts' lookups (releases/serving.ts).
  lookups: ["applications", "prompts"],
  armProblems(arms, byNumber) {
    // A workflow has no input schema of ours (its provider checks inputs): arms may be different
    // providers. An arm without one would fail every call it is given.
    const problems: Record<string, string> = {};
    arms.forEach((arm, i) => {
      const row = byNumber.get(arm.version);
      if (!row || !workflowVersionOf(row).providerSlug)
        problems[`arms.${i}.version`] = `v${arm.version} has no provider configured: its calls could not run`;
    });
    return problems;
  },
  async guardServing() {},
  async gate() {},
  async afterProduction(tx, app, ref) {
    const stored = await versionById(tx, app.id, ref.id);
    if (stored) await syncApplicationProviderFields(tx, app, workflowVersionOf(stored));
  },
  // Evals (docs/decisions/059, "Workflow apps"): the provider checks a call's inputs, so a case's
  // are free-form; a provider declares no output schema; a rubric is judged by the platform's
  // fallback judge (the one online evals use for an app whose model we do not know).
  inputSchemaOf: () => null,
  outputSchemaOf: () => null,
  judgeModelOf: () => FALLBACK_JUDGE_MODEL,
  // The release gate reads prompts.require_passing_eval: a workflow app has no such switch.
  requiresPassingEval: async () => false,
  async setRequirePassingEval(_db, _app, required) {
    if (required)
      throw invalidFields({
        require_passing_eval:
          "is not available for workflow apps: the release gate on a passing eval run applies to prompt apps only",
      });
  },
  listedVersion(version, { production, labels, author }) {
    return toVersion(workflowVersionOf(version), production?.version ?? 1, labels, author);
  },
  restore: restoreWorkflowVersion,
};
