import type { MoneyFigures } from "@promptmint/contracts";
import { cn } from "../../lib/cn";
import { Card, CardBody, CardHeader } from "./card";
import { Money } from "./money";

/** No figures yet (loading, or none to show): every figure reads $0.00 for the period. */
export function noMoneyFigures(days: number): MoneyFigures {
  return {
    period_days: days,
    period: `Last ${days} days`,
    gross_micros: 0,
    fee_micros: 0,
    model_cost_micros: 0,
    net_micros: 0,
  };
}

/**
 * The four money figures side by side, the same wherever they are shown (docs/decisions/029):
 * gross, the platform's fee and the model cost taken off it, and the net that is left.
 */
export function moneyFigureRows(figures: MoneyFigures) {
  return [
    {
      term: "Gross",
      value: <Money micros={figures.gross_micros} />,
      hint: "What your paid calls were charged",
    },
    {
      term: "Platform fee",
      value: <Money micros={figures.fee_micros} as="deduction" />,
      hint: "Promptmint's share",
    },
    {
      term: "Model cost",
      value: <Money micros={figures.model_cost_micros} as="deduction" />,
      hint: "What the calls cost at the model vendor",
    },
    { term: "Net", value: <Money micros={figures.net_micros} />, hint: "What is left for you" },
  ] as const;
}

/** Net, what the creator keeps, stands out from the figures it comes from. */
function weightOf(row: { term: string }): string {
  return row.term === "Net" ? "font-semibold" : "font-medium";
}

/** The figures as a list (the app detail page's side column). */
export function MoneyFiguresList({ figures, className }: { figures: MoneyFigures; className?: string }) {
  return (
    <dl aria-label={`Money, ${figures.period}`} className={cn("divide-y divide-slate-100", className)}>
      {moneyFigureRows(figures).map((row) => (
        <div key={row.term} className="flex items-baseline justify-between gap-4 py-2.5 first:pt-0 last:pb-0">
          <dt className="text-sm text-slate-500">{row.term}</dt>
          <dd className={cn("text-right text-sm text-slate-900 tabular-nums", weightOf(row))}>{row.value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The figures in a card, four across, titled with the period they cover. */
export function MoneyFiguresCard({
  figures,
  title = "Earnings",
  pending = false,
}: {
  figures: MoneyFigures;
  title?: string;
  /** Still loading: dashes instead of figures, so the layout does not jump. */
  pending?: boolean;
}) {
  return (
    <Card>
      <CardHeader title={title} description={figures.period} />
      <CardBody>
        <dl aria-label={`${title}, ${figures.period}`} className="grid grid-cols-2 gap-4 sm:grid-cols-4">
          {moneyFigureRows(figures).map((row) => (
            <div key={row.term} className="min-w-0">
              <dt className="text-xs font-medium text-slate-500">{row.term}</dt>
              <dd className={cn("mt-0.5 text-lg tracking-tight text-slate-900 tabular-nums", weightOf(row))}>
                {pending ? "—" : row.value}
              </dd>
              <dd className="mt-0.5 text-xs text-slate-500">{row.hint}</dd>
            </div>
          ))}
        </dl>
      </CardBody>
    </Card>
  );
}
