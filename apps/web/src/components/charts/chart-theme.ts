/** SPEC §9: every trend chart is 300 px high, the errors pie 200 px. */
export const CHART_HEIGHT = 300;
export const PIE_CHART_HEIGHT = 200;

/** Series colours; the brand blue leads, success and error read as green and red. */
export const chartColors = {
  primary: "#2563eb",
  secondary: "#7c3aed",
  success: "#16a34a",
  error: "#dc2626",
  revenue: "#059669",
  grid: "#e2e8f0",
  axis: "#64748b",
} as const;

/** SPEC §9: the five colours the errors pie cycles through. */
export const PIE_PALETTE = ["#2563eb", "#dc2626", "#f59e0b", "#16a34a", "#7c3aed"] as const;

export const tooltipStyle = { borderRadius: 8, borderColor: chartColors.grid, fontSize: 13 } as const;

/** Calls per day, drawn by both analytics screens. */
export const invocationSeries = {
  dataKey: "invocations",
  name: "Invocations",
  color: chartColors.primary,
} as const;

/** Successful and failed calls per day, stacked, drawn by both analytics screens. */
export const outcomeSeries = [
  { dataKey: "success_count", name: "Success", color: chartColors.success },
  { dataKey: "error_count", name: "Error", color: chartColors.error },
] as const;
