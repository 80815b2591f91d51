import {
  type PromptVersion,
  PromptVersionListSchema,
  type WorkflowVersion,
  WorkflowVersionListSchema,
} from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";
import { type ReleaseApp, releaseBase, releaseQueryKey } from "./app-ref";

/** A saved version of either kind of app: a prompt's, or a workflow's provider configuration. */
export type AppVersion = PromptVersion | WorkflowVersion;

export function isPromptVersion(version: AppVersion): version is PromptVersion {
  return "system_prompt" in version;
}

export function appVersionsQueryKey(app: Pick<ReleaseApp, "kind" | "id">) {
  return [...releaseQueryKey(app), "versions"] as const;
}

/** `GET /{prompts|workflows}/{id}/versions/`: every saved version, newest first, with its labels. */
const appVersions = defineQuery({
  key: appVersionsQueryKey,
  fetch: (app: Pick<ReleaseApp, "kind" | "id">, signal): Promise<AppVersion[]> =>
    app.kind === "prompt"
      ? apiRequest(`${releaseBase(app)}/versions/`, { schema: PromptVersionListSchema, signal })
      : apiRequest(`${releaseBase(app)}/versions/`, { schema: WorkflowVersionListSchema, signal }),
});

export const useAppVersions = (app: Pick<ReleaseApp, "kind" | "id">) =>
  appVersions.useQuery({ kind: app.kind, id: app.id });

/** What a version runs, in a few words: its model, or its workflow provider. */
export function versionEngine(version: AppVersion): string {
  return isPromptVersion(version) ? version.model : (version.provider ?? "no provider");
}
