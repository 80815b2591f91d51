import { ChartColumn } from "lucide-react";
import { EmptyState } from "../../components/ui/empty-state";

/** SPEC §8: the window holds no invocations, so there is nothing to chart. */
export function NoAnalyticsData({ description }: { description: string }) {
  return <EmptyState icon={ChartColumn} title="No data available" description={description} />;
}
