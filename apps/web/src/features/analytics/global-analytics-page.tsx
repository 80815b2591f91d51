import type { GlobalDashboard } from "@promptmint/contracts";
import { Activity, AppWindow, CircleCheck, Users } from "lucide-react";
import { ChartCard, type ChartCardProps } from "../../components/charts/analytics-card";
import { chartColors, invocationSeries, outcomeSeries } from "../../components/charts/chart-theme";
import { AnalyticsHeader } from "../../components/ui/analytics-header";
import { ErrorBox } from "../../components/ui/error-box";
import { MoneyFiguresCard, noMoneyFigures } from "../../components/ui/money-figures";
import { PageContainer } from "../../components/ui/page-container";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { type AnalyticsWindow, useAnalyticsWindow } from "../../lib/analytics-window";
import { formatNumber, formatPercent } from "../../lib/format";
import { useMoneyFigures } from "../../lib/money-figures-query";
import { useGlobalDashboard } from "./api/get-global-dashboard";
import { ApplicationPerformanceTable } from "./application-performance-table";
import { NoAnalyticsData } from "./no-analytics-data";
import { TopErrorsCard } from "./top-errors-card";

/** /analytics: every application of the creator over 7, 30 or 90 days. */
export function GlobalAnalyticsPage() {
  const [days, setDays] = useAnalyticsWindow();
  const dashboard = useGlobalDashboard(days);

  return (
    <PageContainer>
      <AnalyticsHeader
        title="Global Analytics"
        description="Comprehensive analytics and insights across all your applications"
        days={days}
        onDaysChange={setDays}
      />
      {dashboard.isPending ? (
        <LoadingState label="Loading analytics..." />
      ) : dashboard.isError ? (
        <ErrorBox message="Failed to load analytics data" />
      ) : dashboard.data.overview.total_invocations === 0 ? (
        <NoAnalyticsData
          description={`None of your applications was called by a customer in the last ${days} days. Your own calls, tests and eval runs are not counted here.`}
        />
      ) : (
        <GlobalAnalytics dashboard={dashboard.data} days={days} />
      )}
    </PageContainer>
  );
}

function GlobalAnalytics({ dashboard, days }: { dashboard: GlobalDashboard; days: AnalyticsWindow }) {
  const { overview, time_series: timeSeries, applications, errors } = dashboard;
  const period = `Last ${days} days`;
  // The same figures as the dashboard's and each app's (docs/decisions/029).
  const figures = useMoneyFigures(days);
  const data = timeSeries.data;
  const charts: ChartCardProps<(typeof data)[number]>[] = [
    { title: "Invocations Over Time", description: period, kind: "area", data, series: [invocationSeries] },
    {
      title: "Success vs Error Rate",
      description: "Successful and failed calls per day",
      kind: "bar",
      stacked: true,
      data,
      series: outcomeSeries,
    },
    {
      title: "Response Time Trend",
      description: "Average seconds per call",
      kind: "line",
      unit: "seconds",
      data,
      series: [{ dataKey: "avg_response_time", name: "Avg response time", color: chartColors.primary }],
    },
    {
      title: "Token Usage",
      description: "Input and output tokens per day",
      kind: "area",
      stacked: true,
      data,
      series: [
        { dataKey: "input_tokens", name: "Input tokens", color: chartColors.primary },
        { dataKey: "output_tokens", name: "Output tokens", color: chartColors.secondary },
      ],
    },
  ];

  return (
    <div className="space-y-6">
      <section aria-label="Summary" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <StatCard icon={AppWindow} label="Applications" value={formatNumber(overview.total_applications)} />
        <StatCard
          icon={Activity}
          label="Total Invocations"
          value={formatNumber(overview.total_invocations)}
        />
        <StatCard icon={Users} label="Active Users" value={formatNumber(overview.total_users)} />
        <StatCard icon={CircleCheck} label="Success Rate" value={formatPercent(overview.success_rate)} />
      </section>

      {figures.isError ? null : (
        <MoneyFiguresCard figures={figures.data ?? noMoneyFigures(days)} pending={figures.isPending} />
      )}

      <div className="grid gap-6 lg:grid-cols-2">
        {charts.map((chart) => (
          <ChartCard key={chart.title} {...chart} />
        ))}
      </div>

      <ApplicationPerformanceTable applications={applications} />
      {errors.some((error) => error.count > 0) && <TopErrorsCard errors={errors} />}
    </div>
  );
}
