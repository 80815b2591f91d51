import { difyProvider } from "./dify.ts";
import { flowiseProvider } from "./flowise.ts";
import { n8nProvider } from "./n8n.ts";
import type { WorkflowProviderAdapter } from "./provider.ts";
import { webhookProvider } from "./webhook.ts";

/** Every workflow provider, in the order the editor lists them. */
export const WORKFLOW_PROVIDERS: readonly WorkflowProviderAdapter[] = [
  difyProvider,
  n8nProvider,
  flowiseProvider,
  webhookProvider,
];

export function findProvider(slug: string): WorkflowProviderAdapter | undefined {
  return WORKFLOW_PROVIDERS.find((provider) => provider.slug === slug);
}
