import { AdminExposureSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** `GET /admin/exposure`: what refunds and disputes of card top-ups could still cost (decision 045). */
const adminExposure = defineQuery({
  key: () => ["admin-exposure"] as const,
  fetch: (signal) => apiRequest("/admin/exposure", { schema: AdminExposureSchema, signal }),
  retry: false,
});

export const useAdminExposure = adminExposure.useQuery;
