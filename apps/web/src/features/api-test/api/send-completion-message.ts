import { type GatewayRequest, type GatewayResponse, GatewayResponseSchema } from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { useRefreshWalletAfterCall } from "../../../lib/wallet-query";
import { fetchAppParameters, firstTextVariableOf } from "./get-app-parameters";

export interface CompletionTest {
  slug: string;
  text: string;
  /** Calls as this key's owner instead of the signed-in session. */
  apiKey?: string;
}

/** `POST /app/{slug}/completion-messages`, blocking. */
export function sendCompletionMessage(
  slug: string,
  body: GatewayRequest,
  apiKey?: string,
): Promise<GatewayResponse> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/completion-messages`, {
    method: "POST",
    body,
    schema: GatewayResponseSchema,
    token: apiKey || undefined,
  });
}

/**
 * The text goes into the app's first text variable (from its parameters); an app without one
 * gets it as the query.
 */
export async function testCompletion({ slug, text, apiKey }: CompletionTest): Promise<GatewayResponse> {
  const parameters = await fetchAppParameters(slug, apiKey).catch((error: unknown) => {
    console.warn(`[api-test] parameters of ${slug} failed to load`, error);
    return null;
  });
  const variable = firstTextVariableOf(parameters);
  const body: GatewayRequest = variable
    ? { inputs: { [variable]: text }, response_mode: "blocking" }
    : { inputs: {}, query: text, response_mode: "blocking" };
  return sendCompletionMessage(slug, body, apiKey);
}

export function useTestCompletion() {
  const refreshWallet = useRefreshWalletAfterCall();
  return useMutation({ mutationFn: testCompletion, onSettled: refreshWallet });
}
