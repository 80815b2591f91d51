import type { Application, AppType } from "@promptmint/contracts";
import { type LucideIcon, Plus } from "lucide-react";
import type { ReactNode } from "react";
import { useAuth } from "react-oidc-context";
import { useApplications } from "../../lib/applications-query";
import { Alert } from "./alert";
import { ApplicationFilters, useApplicationFilters } from "./application-filters";
import { ButtonLink } from "./button";
import { EmptyState } from "./empty-state";
import { PageContainer } from "./page-container";
import { PageHeader } from "./page-header";
import { QueryStates } from "./query-states";

/**
 * /prompts and /workflows: the signed-in person's applications of one type, filtered, as cards,
 * with the way to create one in the header and in the empty state.
 */
export function ApplicationListPage({
  type,
  title,
  description,
  createLabel,
  plural,
  noMatch,
  empty,
  listLabel,
  card,
}: {
  type: AppType;
  title: string;
  description: string;
  createLabel: string;
  /** What the list holds, in "Please log in to view …" and "Loading …". */
  plural: string;
  noMatch: string;
  empty: { icon: LucideIcon; title: string; description: string };
  listLabel?: string;
  card: (application: Application) => ReactNode;
}) {
  const { isAuthenticated } = useAuth();
  const applications = useApplications({ enabled: isAuthenticated });
  const ofType = (applications.data ?? []).filter((app) => app.type === type);
  const { filters, shown } = useApplicationFilters(ofType);
  const createLink = (
    <ButtonLink to={`/applications/create?type=${type}`}>
      <Plus className="size-4" aria-hidden="true" />
      {createLabel}
    </ButtonLink>
  );

  return (
    <PageContainer>
      <PageHeader title={title} description={description} actions={createLink} />
      {!isAuthenticated ? (
        <Alert tone="warning" role="status">
          {`Please log in to view ${plural}.`}
        </Alert>
      ) : (
        <QueryStates query={applications} loading={`Loading ${plural}...`}>
          {() => (
            <>
              <ApplicationFilters filters={filters} />
              {ofType.length > 0 && shown.length === 0 ? (
                <p className="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-10 text-center text-sm text-slate-500">
                  {noMatch}
                </p>
              ) : shown.length === 0 ? (
                <EmptyState {...empty} action={createLink} />
              ) : (
                <ul aria-label={listLabel} className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
                  {shown.map((app) => (
                    <li key={app.id}>{card(app)}</li>
                  ))}
                </ul>
              )}
            </>
          )}
        </QueryStates>
      )}
    </PageContainer>
  );
}
