import {
  type SponsoredCredit,
  SponsoredCreditListSchema,
  SponsoredCreditSchema,
} from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { walletQueryKey } from "../../../lib/wallet-query";

/** Under the wallet's key: a top-up (which pays percent codes' bonuses) refreshes it too. */
export const creditsQueryKey = [...walletQueryKey, "credits"] as const;

/** `GET /wallet/credits/`: the caller's free trials and promotional credit (decision 080). */
const credits = defineQuery({
  key: () => creditsQueryKey,
  fetch: (signal) => apiRequest("/wallet/credits/", { schema: SponsoredCreditListSchema, signal }),
  staleTime: 0,
});

export const useCredits = credits.useQuery;

/** `POST /promotion-codes/redeem/`: the code's credit, on its creator's apps. */
export function redeemPromotionCode(code: string): Promise<SponsoredCredit> {
  return apiRequest("/promotion-codes/redeem/", {
    method: "POST",
    body: { code },
    schema: SponsoredCreditSchema,
  });
}

export function useRedeemPromotionCode() {
  return useInvalidatingMutation(redeemPromotionCode, creditsQueryKey);
}
