import { AppParametersSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";

export type AppParameters = ReturnType<typeof AppParametersSchema.parse>;

/** `GET /app/{slug}/parameters` (Dify): the app's input form. */
export function fetchAppParameters(slug: string, apiKey: string | undefined): Promise<AppParameters> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/parameters`, {
    schema: AppParametersSchema,
    token: apiKey || undefined,
  });
}

/** The variable of the form's first free-text field (text-input or paragraph), if any. */
export function firstTextVariableOf(parameters: AppParameters | null): string | undefined {
  for (const item of parameters?.user_input_form ?? []) {
    const control = item["text-input"] ?? item.paragraph;
    if (control && typeof control.variable === "string" && control.variable !== "") return control.variable;
  }
  return undefined;
}
