import {
  type OnlineEvalSettings,
  type OnlineEvalSummary,
  OnlineEvalSummarySchema,
} from "@promptmint/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** Where an app's online evals live: `/prompts/{id}` or `/workflows/{id}` (docs/decisions/076). */
export type OnlineEvalSubject = { kind: "prompts" | "workflows"; id: string };

const path = ({ kind, id }: OnlineEvalSubject) => `/${kind}/${encodeURIComponent(id)}/online-evals`;
const key = ({ kind, id }: OnlineEvalSubject) => [kind, id, "online-evals"] as const;

/** `GET {base}/online-evals`: settings, today's spend against the cap, scores per version and arm. */
const onlineEvals = defineQuery({
  key: (subject: OnlineEvalSubject) => key(subject),
  fetch: (subject, signal) => apiRequest(path(subject), { schema: OnlineEvalSummarySchema, signal }),
});
export function useOnlineEvals(subject: OnlineEvalSubject) {
  return useQuery({ ...onlineEvals.options(subject), enabled: subject.id !== "" });
}

/** `PUT {base}/online-evals`: answers the summary, which replaces the cached one. */
export function useSaveOnlineEvals(subject: OnlineEvalSubject) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: OnlineEvalSettings): Promise<OnlineEvalSummary> =>
      apiRequest(path(subject), { method: "PUT", body, schema: OnlineEvalSummarySchema }),
    onSuccess: (summary) => queryClient.setQueryData(key(subject), summary),
  });
}
