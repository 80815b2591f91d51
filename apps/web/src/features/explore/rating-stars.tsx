import type { RatingSummary } from "@promptmint/contracts";
import { Star } from "lucide-react";
import { cn } from "../../lib/cn";
import { formatRating, formatReviewCount } from "../../lib/format";

/** Five stars filled up to `filled` (to the nearest half star): 4.5 shows four and a half. */
export function Stars({ filled, className }: { filled: number; className?: string }) {
  const halves = Math.round(filled * 2) / 2;
  return (
    <span className={cn("inline-flex shrink-0 items-center gap-0.5", className)} aria-hidden="true">
      {[1, 2, 3, 4, 5].map((star) => {
        const part = Math.min(1, Math.max(0, halves - (star - 1)));
        return (
          <span key={star} className="relative inline-flex">
            <Star className="size-4 fill-slate-200 text-slate-200" />
            {part > 0 && (
              <span className="absolute inset-y-0 left-0 overflow-hidden" style={{ width: `${part * 100}%` }}>
                <Star className="size-4 fill-amber-400 text-amber-400" />
              </span>
            )}
          </span>
        );
      })}
    </span>
  );
}

/** An app's rating as Explore shows it: stars, the average and how many reviews; or none yet. */
export function RatingSummaryLine({ rating, className }: { rating: RatingSummary; className?: string }) {
  if (rating.count === 0 || rating.average === null)
    return <span className={cn("block text-sm text-slate-500", className)}>No reviews yet</span>;
  return (
    // A span (shown as a block), so it may sit inside a page header's paragraph.
    <span
      className={cn("flex items-center gap-1.5 text-sm text-slate-600", className)}
      role="img"
      aria-label={`Rated ${formatRating(rating.average)} out of 5 from ${formatReviewCount(rating.count)}`}
    >
      <Stars filled={rating.average} />
      <span className="font-medium text-slate-900 tabular-nums">{formatRating(rating.average)}</span>
      <span className="tabular-nums">({formatReviewCount(rating.count)})</span>
    </span>
  );
}
