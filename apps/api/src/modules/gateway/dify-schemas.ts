import { ApiErrorSchema } from "@promptmint/contracts";
import { z } from "zod";
import { insufficientBalanceExample } from "./examples.ts";

/** What the Dify-compatible routes share in their OpenAPI description. */
export const gatewayErrors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
  412: ApiErrorSchema,
  422: ApiErrorSchema,
  429: ApiErrorSchema,
  502: ApiErrorSchema,
  503: ApiErrorSchema,
  504: ApiErrorSchema,
};
export const gatewaySecurity = [{ bearerAuth: [] }];
export const gatewayTags = ["gateway"];
export const SlugParams = z.object({ slug: z.string().max(100).meta({ example: "haiku-writer" }) });
export const PaymentRequiredSchema = ApiErrorSchema.meta({ examples: [insufficientBalanceExample] });
/** Dify's `{result: "success"}`. */
export const ResultSchema = z.object({ result: z.literal("success") });
/** A Dify `user` in a query string. */
export const UserQuery = z.object({ user: z.string().max(256).optional() });
/** A body holding only Dify's `user` (stop, delete): any other field is refused by name. */
export const UserBody = z.strictObject({ user: z.string().max(256).optional() }).nullish();
