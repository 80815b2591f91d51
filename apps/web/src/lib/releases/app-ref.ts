/**
 * One app as the releases pages see it (docs/decisions/079): its kind, the id of what its versions
 * belong to (the prompt's id, or the workflow's) and its slug. Every releases route exists for both
 * kinds with the same shapes: `/api/prompts/{id}/…` and `/api/workflows/{id}/…`.
 */
export type AppKind = "prompt" | "workflow";

export interface ReleaseApp {
  kind: AppKind;
  /** The prompt's id (a prompt app) or the workflow's (a workflow app): the API routes' `{id}`. */
  id: string;
  slug: string;
}

/** `/prompts/{id}` or `/workflows/{id}`: the API prefix of the app's versions, labels, experiments, evals. */
export function releaseBase(app: Pick<ReleaseApp, "kind" | "id">): string {
  return `/${app.kind}s/${encodeURIComponent(app.id)}`;
}

/** Every releases query of one app starts with this key: invalidating it refreshes all of them. */
export function releaseQueryKey(app: Pick<ReleaseApp, "kind" | "id">) {
  return [`${app.kind}s`, app.id] as const;
}

export type AppPage = "editor" | "versions" | "experiments" | "evals" | "analytics";

/** The web address of one page of an app: `/prompts/{slug}/versions`, `/workflows/{slug}/evals`… */
export function appPagePath(kind: AppKind, slug: string, page: AppPage): string {
  const app = encodeURIComponent(slug);
  if (page === "analytics") return `/applications/${app}/analytics`;
  const root = `/${kind}s/${app}`;
  return page === "editor" ? root : `${root}/${page}`;
}

/** What a releases API route needs of an app: its kind and id. */
export type ReleaseAppId = Pick<ReleaseApp, "kind" | "id">;
