import { REVIEW_MAX_LENGTH } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useReplyToReview } from "./api/my-review";

/** The creator's one reply to a review: a "Reply" button that opens the form. */
export function ReviewReply({ slug, reviewId, author }: { slug: string; reviewId: string; author: string }) {
  const [open, setOpen] = useState(false);
  const [reply, setReply] = useState("");
  const save = useReplyToReview(slug);
  const fieldError = save.error instanceof ApiClientError ? save.error.fields?.reply : undefined;

  if (!open)
    return (
      <Button size="sm" variant="ghost" className="mt-2" onClick={() => setOpen(true)}>
        Reply
      </Button>
    );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ reviewId, reply }, { onSuccess: () => setOpen(false) });
  };
  return (
    <form aria-label={`Reply to ${author}`} onSubmit={submit} className="mt-3 space-y-3">
      <TextareaField
        label="Your reply"
        hint="Shown under the review. You can reply once."
        maxLength={REVIEW_MAX_LENGTH}
        value={reply}
        error={fieldError}
        required
        onChange={(event) => setReply(event.target.value)}
      />
      {save.isError && !fieldError && <Alert tone="error">{getErrorMessage(save.error)}</Alert>}
      <div className="flex flex-wrap gap-2">
        <Button type="submit" size="sm" busy={save.isPending} disabled={reply.trim() === ""}>
          Post reply
        </Button>
        <Button type="button" size="sm" variant="secondary" onClick={() => setOpen(false)}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
