import { StarterPriceSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/**
 * `GET /prompt-apps/starter/`: the model a new prompt app starts with and the lowest price the
 * price guard lets it be created with (issue 32). The server keeps the rule; the form only shows it.
 */
const starterPrice = defineQuery({
  key: () => ["prompt-apps", "starter"] as const,
  fetch: (signal) => apiRequest("/prompt-apps/starter/", { schema: StarterPriceSchema, signal }),
  staleTime: 10 * 60_000,
});

export const useStarterPrice = starterPrice.useQuery;
