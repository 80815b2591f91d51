// The axes every analytics chart shares: the same day ticks on every chart of a page, and value
// ticks on round steps in the unit the chart measures. Recharts' own tick choice depends on the
// chart's width and on its data's extremes (0.085 s, $0.09), so both are chosen here instead.

import { formatCompactNumber } from "../../lib/analytics-format";
import { formatDollars, formatNumber, formatSeconds } from "../../lib/format";

/** What a chart's values measure: how its axis steps and how its ticks and tooltip read. */
export type ChartUnit = "count" | "seconds" | "dollars";

/** At most this many day labels: "Nov 23" fits five times across a phone-wide chart. */
const MAX_DAY_TICKS = 5;
/** The value axis aims at this many steps above zero. */
const VALUE_STEPS = 4;

/**
 * The days labelled on the x axis: every `step`-th day counted back from the last (today is
 * always labelled), the step depending only on how many days there are. Every chart of a page
 * covers the same days (the API fills each window's days), so every chart shows the same ticks.
 */
export function dayTicks(days: readonly string[]): string[] {
  const step = Math.max(1, Math.ceil(days.length / MAX_DAY_TICKS));
  return days.filter((_, index) => (days.length - 1 - index) % step === 0);
}

/** 1, 2, 2.5 or 5 times a power of ten: the smallest such step that covers `max` in `steps` steps. */
function roundStep(max: number, steps: number, minStep: number): number {
  const raw = Math.max(max / steps, minStep);
  const power = 10 ** Math.floor(Math.log10(raw));
  const factor = [1, 2, 2.5, 5, 10].find((candidate) => candidate * power >= raw - 1e-12) ?? 10;
  return factor * power;
}

/** Counts step by whole numbers; seconds and dollars by any round amount (10 ms, 5 cents). */
const MIN_STEP: Record<ChartUnit, number> = { count: 1, seconds: 0.001, dollars: 0.0001 };

/** The y axis for values up to `max`: from 0 to a round top, in round steps (0, 0.025s, 0.050s, ...). */
export function valueTicks(max: number, unit: ChartUnit): number[] {
  // Nothing to draw (no revenue yet): one whole unit, not a scale of hundredths of a cent.
  if (!(max > 0)) return [0, 1];
  const step = roundStep(Math.max(max, 0), VALUE_STEPS, MIN_STEP[unit]);
  const count = Math.max(1, Math.ceil(max / step - 1e-9));
  // Multiplied, not summed, so 0.1 + 0.2 never shows as 0.30000000000000004.
  return Array.from({ length: count + 1 }, (_, index) => Number((index * step).toPrecision(12)));
}

/** The decimals a tick needs to show its step exactly: none for whole units, hundredths at least otherwise. */
function stepDecimals(ticks: readonly number[]): number {
  const step = ticks[1] ?? 1;
  if (step >= 1 && Number.isInteger(step)) return 0;
  return Math.max(2, String(step).split(".")[1]?.length ?? 0);
}

/** How a tick on the value axis reads: `1.5K`, `0`, `0.025s`, `1.5s`, `$0.05`, `$0.025`, `$10`. */
export function tickFormatter(unit: ChartUnit, ticks: readonly number[]): (value: number) => string {
  if (unit === "count") return formatCompactNumber;
  // The axis' origin is plainly 0, in whichever unit the other ticks are.
  if (unit === "seconds") {
    const decimals = stepDecimals(ticks);
    return (value) => (value === 0 ? "0" : formatSeconds(value, decimals));
  }
  const decimals = stepDecimals(ticks);
  if (decimals === 0) return (value) => `$${formatNumber(value)}`;
  if (decimals === 2) return formatDollars;
  return (value) => `$${value.toFixed(decimals)}`;
}

/** How a value reads in the tooltip: exact counts, durations, dollars and cents. */
export function valueFormatter(unit: ChartUnit): (value: number) => string {
  return unit === "count"
    ? formatNumber
    : unit === "seconds"
      ? (value) => formatSeconds(value, 3)
      : formatDollars;
}
