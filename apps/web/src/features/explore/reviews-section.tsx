import type { ExploreAppDetail, Review } from "@promptmint/contracts";
import { MessageSquare, Pencil, Trash2 } from "lucide-react";
import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { Link, useLocation } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { getErrorMessage } from "../../lib/api-client";
import { formatDate, formatDateTime } from "../../lib/format";
import { useAppReviews } from "./api/list-app-reviews";
import { useDeleteMyReview, useMyReview } from "./api/my-review";
import { RatingSummaryLine, Stars } from "./rating-stars";
import { ReviewForm } from "./review-form";
import { ReviewReply } from "./review-reply-form";

/** An app's reviews on its Explore page, and the signed-in buyer's own: write, edit, delete. */
export function ReviewsSection({ app }: { app: ExploreAppDetail }) {
  const { isAuthenticated } = useAuth();
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState(false);
  const reviews = useAppReviews(app.slug, page);
  const mine = useMyReview(app.slug, isAuthenticated);
  const own = mine.data?.review ?? null;
  const mayWrite = mine.data?.can_review === true && own === null && !editing;

  return (
    <Card id="reviews" role="region" aria-labelledby="reviews-title">
      <CardHeader
        title={<span id="reviews-title">Reviews</span>}
        description={<RatingSummaryLine rating={reviews.data?.rating ?? app.rating} className="mt-1" />}
        actions={
          mayWrite && (
            <Button size="sm" onClick={() => setEditing(true)}>
              <Pencil className="size-4" aria-hidden="true" />
              Write a review
            </Button>
          )
        }
      />
      <CardBody className="space-y-5">
        {editing ? (
          <ReviewForm slug={app.slug} review={own} onDone={() => setEditing(false)} />
        ) : own ? (
          <OwnReview slug={app.slug} review={own} onEdit={() => setEditing(true)} />
        ) : (
          <ReviewInvitation signedIn={isAuthenticated} reason={mine.data?.reason ?? null} />
        )}
        <QueryStates query={reviews} loading="Loading reviews...">
          {(list) => {
            // The buyer's own review is shown above, editable: not a second time in the list.
            const others = list.data.filter((review) => review.id !== own?.id);
            return others.length === 0 && !(list.page > 1 || list.has_more) ? (
              own ? null : (
                <EmptyState
                  icon={MessageSquare}
                  title="No reviews yet"
                  description="Buyers who have paid for this app can rate and review it."
                />
              )
            ) : (
              <>
                <ul aria-label="Reviews" className="divide-y divide-slate-100">
                  {others.map((review) => (
                    <ReviewItem
                      key={review.id}
                      slug={app.slug}
                      review={review}
                      canReply={mine.data?.can_reply === true}
                    />
                  ))}
                </ul>
                {(list.page > 1 || list.has_more) && (
                  <nav aria-label="Review pages" className="flex items-center justify-between gap-3">
                    <Button
                      variant="secondary"
                      size="sm"
                      disabled={list.page <= 1}
                      onClick={() => setPage(list.page - 1)}
                    >
                      Newer
                    </Button>
                    <Button
                      variant="secondary"
                      size="sm"
                      disabled={!list.has_more}
                      onClick={() => setPage(list.page + 1)}
                    >
                      Older
                    </Button>
                  </nav>
                )}
              </>
            );
          }}
        </QueryStates>
      </CardBody>
    </Card>
  );
}

/** Who may review, said before they try: visitors are asked to sign in; others told why not. */
function ReviewInvitation({ signedIn, reason }: { signedIn: boolean; reason: string | null }) {
  const location = useLocation();
  if (!signedIn)
    return (
      <p className="text-sm text-slate-600">
        Bought this app?{" "}
        <Link to="/login" state={{ from: location }} className="font-medium text-brand-700 hover:underline">
          Sign in
        </Link>{" "}
        to rate and review it.
      </p>
    );
  return reason ? <p className="text-sm text-slate-500">{reason}.</p> : null;
}

function OwnReview({ slug, review, onEdit }: { slug: string; review: Review; onEdit: () => void }) {
  const remove = useDeleteMyReview(slug);
  return (
    <section aria-label="Your review" className="rounded-lg border border-brand-100 bg-brand-50/40 p-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-sm font-medium text-slate-900">Your review</p>
        <div className="flex gap-2">
          <Button size="sm" variant="secondary" onClick={onEdit}>
            <Pencil className="size-4" aria-hidden="true" />
            Edit
          </Button>
          <Button size="sm" variant="ghost" busy={remove.isPending} onClick={() => remove.mutate()}>
            <Trash2 className="size-4" aria-hidden="true" />
            Delete
          </Button>
        </div>
      </div>
      <ReviewBody review={review} />
      {remove.isError && (
        <Alert tone="error" className="mt-3">
          {getErrorMessage(remove.error)}
        </Alert>
      )}
    </section>
  );
}

function ReviewItem({ slug, review, canReply }: { slug: string; review: Review; canReply: boolean }) {
  return (
    <li className="py-4 first:pt-0 last:pb-0">
      <div className="flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1">
        <p className="text-sm font-medium text-slate-900">{review.author_name}</p>
        <time
          dateTime={review.updated_at}
          title={formatDateTime(review.updated_at)}
          className="text-xs text-slate-500"
        >
          {formatDate(review.updated_at)}
        </time>
      </div>
      <ReviewBody review={review} />
      {canReply && review.reply === null && (
        <ReviewReply slug={slug} reviewId={review.id} author={review.author_name} />
      )}
    </li>
  );
}

function ReviewBody({ review }: { review: Review }) {
  return (
    <>
      <p className="mt-1">
        <span role="img" aria-label={`${review.rating} out of 5 stars`} className="inline-flex">
          <Stars filled={review.rating} />
        </span>
      </p>
      {review.body && (
        <p className="mt-2 text-sm whitespace-pre-line break-words text-slate-700">{review.body}</p>
      )}
      {review.reply && (
        <div className="mt-3 border-l-2 border-slate-200 pl-3">
          <p className="text-xs font-medium text-slate-500">Reply from the creator</p>
          <p className="mt-0.5 text-sm whitespace-pre-line break-words text-slate-700">{review.reply}</p>
        </div>
      )}
    </>
  );
}
