import { z } from "zod";

/** Every error the API returns, management and gateway alike (Dify's shape). */
export const ApiErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  status: z.number().int(),
  fields: z.record(z.string(), z.string()).optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;
