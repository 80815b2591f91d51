import { EvalCaseSchema, PromptConfigSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { BookmarkPlus, Check } from "lucide-react";
import { useNavigate } from "react-router";
import { toast } from "sonner";
import { Button } from "../../components/ui/button";
import { apiRequest } from "../../lib/api-client";

/**
 * "Save as eval case" on one customer call (docs/decisions/078): `POST /prompts/{id}/evals/cases/
 * from-call`. The case gets the call's inputs and a rubric with its answer as the reference; a
 * toast links to the Evals page, where the creator edits it. A call whose inputs were not kept
 * (completion calls keep no content) cannot be saved: the button says why instead.
 */
export function SaveCallAsCaseButton({
  slug,
  invocationId,
  contentKept,
}: {
  slug: string;
  invocationId: string;
  contentKept: boolean;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const evalsPath = `/prompts/${encodeURIComponent(slug)}/evals`;
  const save = useMutation({
    mutationFn: async () => {
      const config = await apiRequest(`/app/${encodeURIComponent(slug)}/prompt/`, {
        schema: PromptConfigSchema,
      });
      const saved = await apiRequest(`/prompts/${encodeURIComponent(config.id)}/evals/cases/from-call`, {
        method: "POST",
        body: { invocation_id: invocationId },
        schema: EvalCaseSchema,
      });
      await queryClient.invalidateQueries({ queryKey: ["prompts", config.id, "evals"] });
      return saved;
    },
    onSuccess: (saved) =>
      toast.success("Saved as an eval case", {
        description: saved.name,
        action: { label: "Open Evals", onClick: () => navigate(evalsPath) },
      }),
    onError: (error) => toast.error(error.message),
  });
  if (!contentKept)
    return (
      <span
        className="text-xs text-slate-400"
        title="This call's inputs were not kept (only chat calls keep their inputs and answer), so it cannot be saved as an eval case"
      >
        Not kept
      </span>
    );
  if (save.isSuccess)
    return (
      <span className="inline-flex items-center gap-1 text-xs text-green-700">
        <Check className="size-3.5" aria-hidden="true" />
        Saved
      </span>
    );
  return (
    <Button
      type="button"
      variant="secondary"
      size="sm"
      busy={save.isPending}
      onClick={() => save.mutate()}
      aria-label={`Save call ${invocationId} as an eval case`}
    >
      <BookmarkPlus className="size-3.5" aria-hidden="true" />
      {save.isPending ? "Saving…" : "Save as eval case"}
    </Button>
  );
}
