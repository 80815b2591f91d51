import { randomUUID } from "node:crypto";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { VersionPin } from "../prompts/load-prompt.ts";
import { chooseVersion, type ServedVersion, type StickyKeys } from "../releases/serving.ts";
import type { WorkflowAnswer, WorkflowCall } from "../workflows/providers/provider.ts";
import { loadWorkflowVersion } from "../workflows/workflow-payload.ts";
import { resolveProvider } from "../workflows/workflows.service.ts";
import {
  type Execution,
  type ExecutionResult,
  type GatewayInput,
  resolveConversation,
  streamOnce,
} from "./execution.ts";

/**
 * A workflow app's call: inputs and query go to its provider as they are (the provider validates
 * them), within the app's timeout. Chat turns carry the provider's own conversation id. The
 * provider and its settings are those of the `production` version, or of the version or label the
 * caller pinned (docs/decisions/060): a save of a live app changes nothing here until promoted.
 * Without a pin, a running experiment gives the caller its arm (decision 058), sticky per caller,
 * exactly as for a prompt app: chosen here, before payment opens.
 */
export async function prepareWorkflowExecution(
  db: Database,
  options: {
    app: ApplicationRow;
    caller: LocalUser;
    input: GatewayInput;
    mode: "completion" | "chat";
    secrets: SecretBox;
    fetch: SafeFetch;
    /**
     * The version or label the caller pinned; without one the call gets `production`, or its arm
     * of a running experiment, sticky per `stickyKey`.
     */
    pin?: VersionPin;
    stickyKey?: string | StickyKeys;
  },
): Promise<Execution> {
  const { app, caller, input, mode } = options;
  // Resolved before anything else, so an unknown pin is refused before payment opens, and a call
  // an experiment chose is charged (or not) as any other.
  const chosen = await chooseVersion(db, app, {
    pin: options.pin,
    stickyKey: options.stickyKey ?? caller.id,
  });
  const { version: workflow } = await loadWorkflowVersion(db, app, chosen.pin);
  const { provider, config } = resolveProvider(workflow, options.secrets);
  const served: ServedVersion = { version: workflow.version, experimentId: chosen.experimentId };
  if (mode === "chat" && !input.query?.trim())
    throw invalidFields({ query: "is required for chat messages" });
  const conversation =
    mode === "chat" ? await resolveConversation(db, { app, caller, input, historyTurns: 0 }) : null;

  const call: WorkflowCall = {
    mode,
    inputs: input.inputs,
    query: input.query,
    user: upstreamUser(options.secrets, caller, input.user, conversation?.id),
    providerConversationId: conversation?.providerConversationId,
    conversationId: conversation?.id,
    maxIterations: workflow.maxIterations,
  };
  const context = { config, fetch: options.fetch, timeoutMs: workflow.timeoutSeconds * 1000 };
  const toResult = (answer: WorkflowAnswer): ExecutionResult => ({ ...answer, answeredBy: provider.slug });
  const generate = async () => toResult(await provider.invoke(context, call));

  return {
    model: provider.slug,
    served,
    conversation: conversation
      ? { id: conversation.id, isNew: conversation.isNew, name: conversation.name }
      : null,
    inputs: input.inputs,
    storeContent: workflow.enableLogging,
    deadlineSeconds: workflow.timeoutSeconds,
    generate,
    stream() {
      if (!provider.stream) return streamOnce(generate);
      const streamed = provider.stream(context, call);
      return { chunks: streamed.chunks, result: streamed.result.then(toResult) };
    },
  };
}

/**
 * Who the provider sees as the end user (Dify's `user`, n8n's session), never one of our ids. A
 * caller's own `user` is scoped to that caller (two consumers' "alice" stay apart), so it keeps
 * one upstream identity across calls; without one, a conversation is its own upstream user (its
 * turns share one session) and a call outside any conversation gets a fresh one, so one consumer's
 * unrelated calls never share an upstream session.
 */
function upstreamUser(
  secrets: SecretBox,
  caller: LocalUser,
  user: string | undefined,
  conversationId: string | undefined,
): string {
  if (user) return `pm-${secrets.pseudonym("user", caller.id, user)}`;
  if (conversationId) return `pm-${secrets.pseudonym("conversation", conversationId)}`;
  return `pm-${randomUUID()}`;
}
