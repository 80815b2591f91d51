import type { AppUsage } from "@promptmint/contracts";
import { BarChart3, DollarSign, FileText, Package, Plus, Workflow, Zap } from "lucide-react";
import type { ReactNode } from "react";
import { ButtonLink } from "../../components/ui/button";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { MoneyFiguresCard, noMoneyFigures } from "../../components/ui/money-figures";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { useApplications } from "../../lib/applications-query";
import { formatNumber } from "../../lib/format";
import { useMoneyFigures } from "../../lib/money-figures-query";
import { USAGE_DAYS, useApplicationsUsage } from "./api/get-application-usage";
import { ApplicationsTable } from "./applications-table";
import { FirstSteps } from "./first-steps";

function totalsOf(usage: Map<string, AppUsage>) {
  let invocations = 0;
  for (const figures of usage.values()) invocations += figures.total_invocations;
  return { invocations };
}

/** A figure, or a dash while the applications load. */
function figure(pending: boolean, value: ReactNode) {
  if (!pending) return value;
  return (
    <>
      <span aria-hidden="true">—</span>
      <span className="sr-only">Loading</span>
    </>
  );
}

/** /applications: the same screen, titled after the navigation item that opens it. */
export function ApplicationsPage() {
  return <DashboardPage title="Applications" />;
}

/** /dashboard, and /applications under that name. */
export function DashboardPage({ title = "Dashboard" }: { title?: string }) {
  const applications = useApplications();
  const apps = applications.data ?? [];
  const usage = useApplicationsUsage(apps.map((app) => app.slug));
  const totals = totalsOf(usage);
  const pending = applications.isPending;
  // Money across the apps, from the same rollups as each app's row (docs/decisions/029).
  const money = useMoneyFigures(USAGE_DAYS);
  const figures = money.data ?? noMoneyFigures(USAGE_DAYS);

  return (
    <PageContainer>
      <PageHeader
        title={title}
        description={
          !pending && apps.length === 0
            ? "Call AI apps from the catalogue, or publish your own."
            : "Manage your AI applications and follow how they perform."
        }
        actions={
          <ButtonLink to="/applications/create">
            <Plus className="size-4" aria-hidden="true" />
            Create Application
          </ButtonLink>
        }
      />
      {applications.isError ? (
        <ErrorBox message="Failed to load dashboard data" />
      ) : (
        <>
          <div className="mb-6 flex flex-wrap gap-2">
            <ButtonLink to="/analytics" variant="secondary" size="sm">
              <BarChart3 className="size-4" aria-hidden="true" />
              Global Analytics
            </ButtonLink>
            <ButtonLink to="/prompts" variant="secondary" size="sm">
              <FileText className="size-4" aria-hidden="true" />
              Manage Prompts
            </ButtonLink>
            <ButtonLink to="/workflows" variant="secondary" size="sm">
              <Workflow className="size-4" aria-hidden="true" />
              Manage Workflows
            </ButtonLink>
          </div>
          {/* Shown while loading too (figures "—"), so the page keeps its layout when they arrive. */}
          <section aria-label="Summary" className="mb-8 grid gap-4 sm:grid-cols-3">
            <StatCard
              icon={Package}
              label="Total Applications"
              value={figure(pending, formatNumber(apps.length))}
              hint="Yours, any status"
            />
            <StatCard
              icon={Zap}
              label="Total Invocations"
              value={figure(pending, formatNumber(totals.invocations))}
              hint={figures.period}
            />
            <StatCard
              icon={DollarSign}
              label="Net Earnings"
              value={figure(pending || money.isPending, <Money micros={figures.net_micros} />)}
              hint={figures.period}
            />
          </section>
          {!money.isError && (pending || apps.length > 0) && (
            <section aria-label="Money" className="mb-8">
              <MoneyFiguresCard figures={figures} pending={money.isPending} />
            </section>
          )}
          {pending ? (
            <LoadingState label="Loading applications..." />
          ) : apps.length === 0 ? (
            <div className="space-y-8">
              <EmptyState
                icon={Package}
                title="No applications"
                description="Get started by creating a new application."
                action={
                  <ButtonLink to="/applications/create">
                    <Plus className="size-4" aria-hidden="true" />
                    Create Application
                  </ButtonLink>
                }
              />
              <FirstSteps />
            </div>
          ) : (
            <ApplicationsTable applications={apps} usage={usage} />
          )}
        </>
      )}
    </PageContainer>
  );
}
