import { type PaymentMethod, PaymentMethodSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { paymentMethodsPath, paymentMethodsQueryKey } from "./list-payment-methods";

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
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => makeDefaultPaymentMethod(appSlug, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: paymentMethodsQueryKey(appSlug) }),
  });
}

export function useDeletePaymentMethod(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deletePaymentMethod(appSlug, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: paymentMethodsQueryKey(appSlug) }),
  });
}
