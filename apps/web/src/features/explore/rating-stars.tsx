import type { RatingSummary } from "@promptmint/contracts";
import { Star } from "lucide-react";
import { cn } from "../../lib/cn";
import { formatRating, formatReviewCount } from "../../lib/format";

/** Five stars, the first `filled` of them coloured (rounded to the nearest whole star). */
export function Stars({ filled, className }: { filled: number; className?: string }) {
  return (
    <span className={cn("inline-flex shrink-0 items-center gap-0.5", className)} aria-hidden="true">
      {[1, 2, 3, 4, 5].map((star) => (
        <Star
          key={star}
          className={cn(
            "size-4",
            star <= Math.round(filled) ? "fill-amber-400 text-amber-400" : "fill-slate-200 text-slate-200",
          )}
        />
      ))}
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
