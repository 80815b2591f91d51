import { REVIEW_MAX_LENGTH, type Review } from "@promptmint/contracts";
import { Star } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";
import { useSaveMyReview } from "./api/my-review";

const STAR_WORDS = ["Poor", "Fair", "Good", "Very good", "Excellent"];

/**
 * Writing or editing one's review: a rating as a radio group (arrow keys move between the stars,
 * as in any radio group) and optional text.
 */
export function ReviewForm({
  slug,
  review,
  onDone,
}: {
  slug: string;
  review: Review | null;
  onDone: () => void;
}) {
  const [rating, setRating] = useState(review?.rating ?? 0);
  const [body, setBody] = useState(review?.body ?? "");
  const [missingRating, setMissingRating] = useState(false);
  const save = useSaveMyReview(slug);
  const fields = save.error instanceof ApiClientError ? (save.error.fields ?? {}) : {};

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (rating === 0) {
      setMissingRating(true);
      return;
    }
    save.mutate({ rating, body }, { onSuccess: onDone });
  };

  const ratingError = missingRating && rating === 0 ? "Choose a rating from 1 to 5 stars" : fields.rating;
  return (
    <form aria-label={review ? "Edit your review" : "Write a review"} onSubmit={submit} className="space-y-4">
      <fieldset aria-describedby={ratingError ? "review-rating-error" : undefined}>
        <legend className="mb-1.5 text-sm font-medium text-slate-700">Your rating</legend>
        <div className="flex flex-wrap items-center gap-1">
          {STAR_WORDS.map((word, index) => {
            const value = index + 1;
            return (
              <label key={word} className="group relative inline-flex cursor-pointer rounded p-0.5">
                <input
                  type="radio"
                  name="rating"
                  value={value}
                  checked={rating === value}
                  onChange={() => setRating(value)}
                  className="peer absolute inset-0 z-10 m-0 size-full cursor-pointer appearance-none opacity-0"
                  aria-label={`${value} ${value === 1 ? "star" : "stars"}: ${word}`}
                />
                <Star
                  aria-hidden="true"
                  className={cn(
                    "size-7 transition-colors peer-focus-visible:outline-2 peer-focus-visible:outline-offset-2 peer-focus-visible:outline-brand-600",
                    value <= rating
                      ? "fill-amber-400 text-amber-400"
                      : "fill-slate-200 text-slate-300 group-hover:text-amber-300",
                  )}
                />
              </label>
            );
          })}
          <span className="ml-2 text-sm text-slate-600" aria-live="polite">
            {rating > 0 ? STAR_WORDS[rating - 1] : ""}
          </span>
        </div>
        {ratingError && (
          <p id="review-rating-error" className="mt-1 text-sm text-red-600">
            {ratingError}
          </p>
        )}
      </fieldset>
      <TextareaField
        label="Review (optional)"
        hint={`What worked, what did not. Up to ${REVIEW_MAX_LENGTH} characters.`}
        rows={4}
        maxLength={REVIEW_MAX_LENGTH}
        value={body}
        error={fields.body}
        onChange={(event) => setBody(event.target.value)}
      />
      {save.isError && !fields.rating && !fields.body && (
        <Alert tone="error">{getErrorMessage(save.error)}</Alert>
      )}
      <div className="flex flex-wrap gap-2">
        <Button type="submit" busy={save.isPending}>
          {review ? "Save review" : "Post review"}
        </Button>
        <Button type="button" variant="secondary" onClick={onDone}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
