import {
  type CreatePromotionCodeSchema,
  type PromotionCode,
  PromotionCodeListSchema,
  PromotionCodeSchema,
} from "@promptmint/contracts";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

export type CreatePromotionCodeBody = z.input<typeof CreatePromotionCodeSchema>;

/** A creator's codes are the creator's, not one app's: one key for every billing page. */
export const promotionCodesQueryKey = ["promotion-codes"] as const;

/** `GET /promotion-codes/`: the caller's promotion codes, newest first. */
const promotionCodes = defineQuery({
  key: () => promotionCodesQueryKey,
  fetch: (signal) => apiRequest("/promotion-codes/", { schema: PromotionCodeListSchema, signal }),
});

export const usePromotionCodes = promotionCodes.useQuery;

/** `POST /promotion-codes/`: a code giving credit on the creator's apps (or one app). */
export function createPromotionCode(body: CreatePromotionCodeBody): Promise<PromotionCode> {
  return apiRequest("/promotion-codes/", { method: "POST", body, schema: PromotionCodeSchema });
}

/** `DELETE /promotion-codes/{id}/`: no more redemptions; credit already given stays. */
export async function endPromotionCode(id: string): Promise<void> {
  await apiRequest(`/promotion-codes/${encodeURIComponent(id)}/`, { method: "DELETE" });
}

export function useCreatePromotionCode() {
  return useInvalidatingMutation(createPromotionCode, promotionCodesQueryKey);
}

export function useEndPromotionCode() {
  return useInvalidatingMutation(endPromotionCode, promotionCodesQueryKey);
}
