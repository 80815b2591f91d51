import { type IoSchema, IoSchemaSchema } from "@promptmint/contracts";
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  appLabels,
  appVersions,
  creatorModelKeys,
  experiments,
  packages,
  prompts,
} from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { scheduledPriceCents } from "../billing/price-changes.ts";
import { findModel } from "../models/model-catalog.ts";
import {
  formatCents,
  formatUsd4,
  minimumPriceCents,
  netOfFeeMicros,
  type WorstCase,
  type WorstCaseSettings,
  worstCaseCostMicros,
} from "../models/model-prices.ts";
import { productionOf } from "../releases/labels.ts";
import { versionsByNumber } from "../releases/versions.ts";
import { loadPrompt, promptVersionOf } from "./load-prompt.ts";

/**
 * The price guard (docs/decisions/026): a prompt app on the platform's model keys must be priced
 * so that the creator's share of one call (price less the platform fee) covers the worst-case
 * model cost of that call, and each plan's share covers its included calls' worst case. Every
 * path that changes the price, the model settings, the template or whose keys are used calls it
 * with the values it is about to write; an app that already violates it keeps running, but
 * cannot be saved again without a fix.
 */
export interface PromptCostSettings extends WorstCaseSettings {
  modelKeys: "platform" | "creator";
}

interface PlanCandidate {
  id?: string;
  name: string;
  priceCents: number;
  includedCalls: number;
  isActive: boolean;
}

/** The app's current prompt settings as the guard sees them, with `overrides` applied. */
export async function promptCostSettings(
  db: Database,
  app: ApplicationRow,
  overrides: Partial<PromptCostSettings> = {},
): Promise<PromptCostSettings> {
  const { prompt, active } = await loadPrompt(db, app);
  return {
    model: prompt.model,
    modelKeys: prompt.modelKeys,
    maxTokens: prompt.maxTokens,
    systemPrompt: active.systemPrompt,
    promptTemplate: active.promptTemplate,
    inputSchema: parseSchema(active.inputSchema),
    outputSchema: parseSchema(active.outputSchema),
    ...overrides,
  };
}

function parseSchema(value: unknown): IoSchema | null {
  const parsed = IoSchemaSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** What the message says about a worst case: "claude-3-opus with 8192 max tokens, $0.6160". */
function describeWorst(worst: WorstCase): string {
  return `${worst.model} with ${worst.outputTokens} max tokens, ${formatUsd4(worst.micros)}`;
}

function minimumText(cents: number): string {
  return `${cents} cent${cents === 1 ? "" : "s"} (${formatCents(cents)})`;
}

/**
 * Refuses (400, `fields.price_cents`) a prompt app whose price or plans cannot cover the worst
 * case under `settings`. `priceCents` is the price the creator has set (an announced increase
 * counts: the guard judges the price being chosen). `plan` is a plan being created or changed,
 * judged alone (as it will be after the write).
 */
export async function refuseUncoveredPrice(
  db: Database,
  options: {
    app: ApplicationRow;
    feePercent: number;
    settings?: PromptCostSettings;
    priceCents?: number;
    plan?: PlanCandidate;
  },
): Promise<void> {
  const { app } = options;
  if (app.type !== "prompt") return;
  if (options.settings) return refuseUncoveredSettings(db, options, options.settings);
  // A price or a plan being chosen: every version that serves paid calls is judged by it
  // (decision 063), each refusal naming the arm or label that fails.
  for (const served of await servingVersions(db, app)) {
    try {
      await refuseUncoveredSettings(db, options, served.settings);
    } catch (error) {
      if (!(error instanceof AppError) || served.as === null) throw error;
      const message = `${served.as} would not be covered: ${error.message}`;
      throw new AppError(error.code, message, {
        fields: Object.fromEntries(Object.keys(error.fields ?? {}).map((field) => [field, message])),
      });
    }
  }
}

/**
 * The versions of a prompt app that serve paid calls, each with what to call it in a refusal (null
 * for production, which the guard's messages have always meant): production, each arm of a running
 * experiment, and each label a caller may pin (decision 057). `latest` is not judged (it is the
 * creator's newest save, released to no one); a caller pinning it or a bare version number the
 * price does not cover is refused at call time (prompt-call.ts), and every call's input is bounded
 * by its pay (gateway/call-worst-case.ts).
 */
async function servingVersions(
  db: Database,
  app: ApplicationRow,
): Promise<{ as: string | null; settings: PromptCostSettings }[]> {
  const [prompt] = await db.select().from(prompts).where(eq(prompts.applicationId, app.id)).limit(1);
  if (!prompt) return [{ as: null, settings: await promptCostSettings(db, app) }];
  const named = new Map<string, string | null>();
  const production = await productionOf(db, app.id);
  if (production) named.set(production.id, null);
  const [running] = await db
    .select({ arms: experiments.arms })
    .from(experiments)
    .where(and(eq(experiments.applicationId, app.id), eq(experiments.status, "running")))
    .limit(1);
  const armRows = running?.arms.length
    ? [
        ...(
          await versionsByNumber(
            db,
            app.id,
            running.arms.map((arm) => arm.version),
          )
        ).values(),
      ]
    : [];
  for (const arm of armRows)
    if (!named.has(arm.id)) named.set(arm.id, `The running experiment's arm v${arm.version}`);
  const labels = await db
    .select({ name: appLabels.name, versionId: appLabels.versionId })
    .from(appLabels)
    .where(eq(appLabels.applicationId, app.id));
  for (const label of labels)
    if (!named.has(label.versionId)) named.set(label.versionId, `The label '${label.name}'`);
  if (named.size === 0) return [{ as: null, settings: await promptCostSettings(db, app) }];
  const rows = await db
    .select()
    .from(appVersions)
    .where(inArray(appVersions.id, [...named.keys()]));
  return rows.map(promptVersionOf).map((version) => {
    const as = named.get(version.id) ?? null;
    return {
      as: as?.startsWith("The label") ? `${as} (v${version.version})` : as,
      settings: {
        model: version.model,
        modelKeys: prompt.modelKeys,
        maxTokens: version.maxTokens,
        systemPrompt: version.systemPrompt,
        promptTemplate: version.promptTemplate,
        inputSchema: parseSchema(version.inputSchema),
        outputSchema: parseSchema(version.outputSchema),
      },
    };
  });
}

/** The guard for one version's settings (see refuseUncoveredPrice). */
async function refuseUncoveredSettings(
  db: Database,
  options: { app: ApplicationRow; feePercent: number; priceCents?: number; plan?: PlanCandidate },
  settings: PromptCostSettings,
): Promise<void> {
  const { app, feePercent } = options;
  if (settings.modelKeys === "creator") return;
  const worst = worstCaseCostMicros(settings);
  if (worst.micros <= 0) return;
  const minimum = minimumPriceCents(worst.micros, feePercent);
  const refuse = (message: string) => {
    throw new AppError("bad_request", message, { fields: { price_cents: message } });
  };
  if (minimum === null)
    refuse(
      `No price can cover the model cost while the platform fee is ${feePercent}%: ${describeWorst(worst)}. Use your own model keys (model_keys: creator).`,
    );
  // A plan being created or changed is judged alone; otherwise the app's price and its active plans.
  if (!options.plan) {
    const price = options.priceCents ?? scheduledPriceCents(app);
    if (netOfFeeMicros(price, feePercent) < worst.micros) {
      // One sentence with the figure that passes (issue 32); the estimate panel says the rest.
      refuse(belowFloorMessage(minimum as number, worst, feePercent));
    }
  }
  const plans = options.plan
    ? [options.plan]
    : (
        await db
          .select({
            id: packages.id,
            name: packages.name,
            priceCents: packages.priceCents,
            pendingPriceCents: packages.pendingPriceCents,
            pendingPriceAt: packages.pendingPriceAt,
            includedCalls: packages.includedCalls,
            isActive: packages.isActive,
          })
          .from(packages)
          .where(and(eq(packages.applicationId, app.id), eq(packages.isActive, true)))
      ).map((row) => ({ ...row, priceCents: scheduledPriceCents(row) }));
  for (const plan of plans) {
    if (!plan.isActive || plan.includedCalls <= 0) continue;
    const needed = worst.micros * plan.includedCalls;
    if (netOfFeeMicros(plan.priceCents, feePercent) >= needed) continue;
    const planMinimum = minimumPriceCents(needed, feePercent) as number;
    refuse(
      `At least ${minimumText(planMinimum)} for the plan '${plan.name}' with ${plan.includedCalls} included calls covers their worst case (${describeWorst(worst)} each) after the ${feePercent}% fee.`,
    );
  }
}

/**
 * The lowest price a prompt app may be created with on the platform's keys, for the settings it
 * starts with (prompts.service.ts's starter): what Create Application shows where the price is
 * typed, and what creating one refuses below (issue 32), so Save & Publish does not refuse later
 * what was accepted first.
 */
export function priceFloor(
  settings: WorstCaseSettings,
  feePercent: number,
): { minimumCents: number | null; worst: WorstCase } {
  const worst = worstCaseCostMicros(settings);
  return { minimumCents: minimumPriceCents(worst.micros, feePercent), worst };
}

/** The guard's one sentence for a price below `minimumCents` (the figure that passes). */
export function belowFloorMessage(minimumCents: number, worst: WorstCase, feePercent: number): string {
  return `At least ${minimumText(minimumCents)} a call covers its worst case (${describeWorst(worst)}) after the ${feePercent}% fee.`;
}

/** 400 when an app is set to run on its creator's keys but the creator has no key for its model's provider. */
export async function refuseCreatorKeysWithoutKey(
  db: Database,
  ownerId: string,
  settings: Pick<PromptCostSettings, "model" | "modelKeys">,
): Promise<void> {
  if (settings.modelKeys !== "creator") return;
  const provider = findModel(settings.model)?.provider;
  if (!provider || provider === "sandbox") return;
  const [found] = await db
    .select({ provider: creatorModelKeys.provider })
    .from(creatorModelKeys)
    .where(and(eq(creatorModelKeys.userId, ownerId), eq(creatorModelKeys.provider, provider)))
    .limit(1);
  if (!found)
    throw invalidFields({
      model_keys: `needs your own ${provider} API key for ${settings.model}: add it under Profile → Model keys first`,
    });
}
