import { PaymentMethodListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/**
 * `GET /wallet/payment-methods/`: the person's saved cards, the default first, for the top-up
 * (the same cards an app's billing page lists and saves).
 */
const savedCards = defineQuery({
  key: () => ["wallet", "payment-methods"] as const,
  fetch: (signal) => apiRequest("/wallet/payment-methods/", { schema: PaymentMethodListSchema, signal }),
  // A card saved moments ago on an app's billing page is offered at once.
  staleTime: 0,
});

export const savedCardsQueryOptions = savedCards.options;
