import { type Payout, PayoutSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { earningsQueryKey } from "./get-earnings";

/**
 * `POST /payouts/`: pays out what can be withdrawn. The caller keeps one `idempotencyKey` per
 * Withdraw the creator means, so a retried request (double click, lost answer) pays once.
 */
export function withdrawEarnings(idempotencyKey: string): Promise<Payout> {
  return apiRequest("/payouts/", {
    method: "POST",
    body: {},
    schema: PayoutSchema,
    headers: { "Idempotency-Key": idempotencyKey },
  });
}

export function useWithdrawEarnings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: withdrawEarnings,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: earningsQueryKey }),
  });
}
