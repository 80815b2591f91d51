import { formatDeductionMicros, formatMicros, formatMicrosExact, formatSignedMicros } from "../../lib/format";

/** `signed`: `+$0.05` for what came in; `deduction`: `-$0.05` for what was taken off. */
type MoneyKind = "amount" | "signed" | "deduction";

function shownAndExact(micros: number, as: MoneyKind): { shown: string; exact: string } {
  const value = as === "deduction" && micros !== 0 ? -Math.abs(micros) : micros;
  const shown =
    as === "signed"
      ? formatSignedMicros(value)
      : as === "deduction"
        ? formatDeductionMicros(value)
        : formatMicros(value);
  return { shown, exact: `${as === "signed" && value > 0 ? "+" : ""}${formatMicrosExact(value)}` };
}

/** The hover text of an amount shown rounded to the cent: `Exactly $83.565`, or none when nothing was rounded. */
export function exactMoneyTitle(micros: number, as: MoneyKind = "amount"): string | undefined {
  const { shown, exact } = shownAndExact(micros, as);
  return exact !== shown ? `Exactly ${exact}` : undefined;
}

/**
 * An amount of money as people read it (two decimals), with the exact ledger figure on hover
 * when the two differ: `$83.57`, titled `Exactly $83.565`.
 */
export function Money({ micros, as = "amount" }: { micros: number; as?: MoneyKind }) {
  return <span title={exactMoneyTitle(micros, as)}>{shownAndExact(micros, as).shown}</span>;
}
