import type { Application } from "@promptmint/contracts";
import { Activity, ArrowLeft, CircleCheck, Timer, Users } from "lucide-react";
import { Link, useParams } from "react-router";
import { ChartCard } from "../../components/charts/analytics-card";
import { chartColors, invocationSeries, outcomeSeries } from "../../components/charts/chart-theme";
import { hasVersions, VersionFiguresTable } from "../../components/charts/version-figures-table";
import { AppTabs } from "../../components/releases/app-tabs";
import { AnalyticsHeader } from "../../components/ui/analytics-header";
import { ErrorBox } from "../../components/ui/error-box";
import { MoneyFiguresCard } from "../../components/ui/money-figures";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { type AnalyticsWindow, useAnalyticsWindow } from "../../lib/analytics-window";
import { isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { formatDurationSeconds, formatMicros, formatNumber, formatPercent } from "../../lib/format";
import { type ApplicationAnalytics, useApplicationAnalytics } from "./api/get-application-analytics";
import { NoAnalyticsData } from "./no-analytics-data";
import { RecentInvocationsTable } from "./recent-invocations-table";

const LOAD_FAILED = "Failed to load analytics data";

/** /applications/:slug/analytics: one application's usage, performance, revenue and latest calls. */
export function ApplicationAnalyticsPage() {
  const { slug = "" } = useParams();
  const [days, setDays] = useAnalyticsWindow();
  const application = useApplication(slug);
  const analytics = useApplicationAnalytics(slug, days, { enabled: application.isSuccess });

  return (
    <PageContainer>
      <Link
        to={`/applications/${slug}`}
        className="mb-4 inline-flex items-center gap-1.5 text-sm font-medium text-slate-600 hover:text-brand-700"
      >
        <ArrowLeft className="size-4" aria-hidden="true" />
        Back to Application
      </Link>
      {application.isPending ? (
        <LoadingState label="Loading analytics..." />
      ) : application.isError ? (
        isNotFoundError(application.error) ? (
          <NotFoundState title="Application not found" backTo="/dashboard" backLabel="Back to dashboard" />
        ) : (
          <ErrorBox message={LOAD_FAILED} />
        )
      ) : (
        <>
          {(application.data.type === "prompt" || application.data.type === "workflow") && (
            <AppTabs kind={application.data.type} slug={slug} current="analytics" />
          )}
          <AnalyticsHeader
            title={`${application.data.name} Analytics`}
            description={`Usage, performance and revenue of ${application.data.name}, a ${application.data.type} application.`}
            days={days}
            onDaysChange={setDays}
          />
          {analytics.isError ? (
            <ErrorBox message={LOAD_FAILED} />
          ) : !analytics.data ? (
            <LoadingState label="Loading analytics..." />
          ) : (
            <ApplicationAnalyticsReport
              application={application.data}
              analytics={analytics.data}
              days={days}
            />
          )}
        </>
      )}
    </PageContainer>
  );
}

function ApplicationAnalyticsReport({
  application,
  analytics,
  days,
}: {
  application: Application;
  analytics: ApplicationAnalytics;
  days: AnalyticsWindow;
}) {
  const { usage, figures, byVersion, performance, recentInvocations } = analytics;
  const period = `Last ${days} days`;

  return (
    <div className="space-y-6">
      {usage.total_invocations === 0 ? (
        <NoAnalyticsData description={`${application.name} was not called in the last ${days} days.`} />
      ) : (
        <>
          <section aria-label="Summary" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
            <StatCard
              icon={Activity}
              label="Total Invocations"
              value={formatNumber(usage.total_invocations)}
            />
            <StatCard icon={Users} label="Unique Users" value={formatNumber(usage.total_users)} />
            <StatCard
              icon={CircleCheck}
              label="Success Rate"
              value={formatPercent(performance.success_rate)}
            />
            <StatCard
              icon={Timer}
              label="Avg Response Time"
              value={formatDurationSeconds(performance.average_response_time)}
            />
          </section>

          <MoneyFiguresCard figures={figures} />

          {hasVersions(byVersion) && <VersionFiguresTable rows={byVersion} period={period} />}

          <div className="grid gap-6 lg:grid-cols-2">
            <ChartCard
              title="Usage Over Time"
              description={period}
              kind="area"
              data={usage.series}
              series={[invocationSeries]}
            />
            <ChartCard
              title="Performance Metrics"
              description="Successful and failed calls per day"
              kind="bar"
              stacked
              data={performance.series}
              series={outcomeSeries}
            />
            <ChartCard
              title="Response Time Trend"
              description="Average seconds per call"
              kind="line"
              unit="seconds"
              data={performance.series}
              series={[{ dataKey: "response_time", name: "Response time", color: chartColors.primary }]}
            />
            <ChartCard
              title="Revenue Trend"
              description={`${formatMicros(figures.gross_micros)} gross revenue in the last ${days} days`}
              kind="line"
              unit="dollars"
              data={usage.series}
              series={[{ dataKey: "revenue", name: "Revenue", color: chartColors.revenue }]}
            />
          </div>
        </>
      )}
      <RecentInvocationsTable
        invocations={recentInvocations}
        savesCasesOf={application.type === "prompt" ? application.slug : undefined}
      />
    </div>
  );
}
