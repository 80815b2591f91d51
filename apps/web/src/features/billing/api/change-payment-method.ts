import { type PaymentMethod, PaymentMethodSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { paymentMethodsPath, paymentMethodsQueryKey } from "../../../lib/billing/list-payment-methods";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `PATCH /app/{app}/payment-methods/{id}/` {is_default: true}. */
export function makeDefaultPaymentMethod(appSlug: string, id: string): Promise<PaymentMethod> {
  return apiRequest(`${paymentMethodsPath(appSlug)}${encodeURIComponent(id)}/`, {
    method: "PATCH",
    body: { is_default: true },
    schema: PaymentMethodSchema,
  });
}

/** `DELETE /app/{app}/payment-methods/{id}/`: answers 204. */
export async function deletePaymentMethod(appSlug: string, id: string): Promise<void> {
  await apiRequest(`${paymentMethodsPath(appSlug)}${encodeURIComponent(id)}/`, { method: "DELETE" });
}

export function useMakeDefaultPaymentMethod(appSlug: string) {
  return useInvalidatingMutation(
    (id: string) => makeDefaultPaymentMethod(appSlug, id),
    paymentMethodsQueryKey(appSlug),
  );
}

export function useDeletePaymentMethod(appSlug: string) {
  return useInvalidatingMutation(
    (id: string) => deletePaymentMethod(appSlug, id),
    paymentMethodsQueryKey(appSlug),
  );
}
