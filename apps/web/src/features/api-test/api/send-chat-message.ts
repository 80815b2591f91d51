import { type GatewayRequest, type GatewayResponse, GatewayResponseSchema } from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { useRefreshWalletAfterCall } from "../../../lib/wallet-query";

export interface ChatTest {
  slug: string;
  query: string;
  /** Continues this conversation; a new one starts without it. */
  conversationId?: string;
  apiKey?: string;
}

/** `POST /app/{slug}/chat-messages`, blocking. */
export function sendChatMessage({ slug, query, conversationId, apiKey }: ChatTest): Promise<GatewayResponse> {
  const body: GatewayRequest = {
    query,
    inputs: {},
    response_mode: "blocking",
    conversation_id: conversationId,
  };
  return apiRequest(`/app/${encodeURIComponent(slug)}/chat-messages`, {
    method: "POST",
    body,
    schema: GatewayResponseSchema,
    token: apiKey || undefined,
  });
}

export function useTestChat() {
  const refreshWallet = useRefreshWalletAfterCall();
  return useMutation({ mutationFn: sendChatMessage, onSettled: refreshWallet });
}
