import { SLUG_PATTERN } from "@promptmint/contracts";

/**
 * The MCP endpoints as OAuth protected resources (RFC 9728, RFC 8707): each endpoint's URL is its
 * own resource indicator, so a token an MCP client obtains is good at that endpoint only, never
 * for the rest of the API (docs/decisions/034-mcp.md).
 */

/** The one scope MCP tokens carry: calling apps, paid from the user's wallet. */
export const MCP_SCOPE = "mcp";

/** The catalogue's canonical path (the API is also served under /api/v1: so is MCP). */
export const CATALOGUE_PATH = "/api/mcp";
export const appMcpUrl = (publicUrl: string, slug: string) => `${publicUrl}/api/app/${slug}/mcp`;
/**
 * The agents' endpoints (x402 per call, no account, docs/decisions/074): not OAuth protected
 * resources, so never a resource indicator and without protected resource metadata.
 */
export const AGENT_CATALOGUE_PATH = "/api/v1/agents/mcp";
export const agentAppMcpUrl = (publicUrl: string, slug: string) =>
  `${publicUrl}/api/v1/agents/app/${slug}/mcp`;

/** Where an endpoint's metadata is: the RFC 9728 well-known URI with the endpoint's path appended. */
export const resourceMetadataUrl = (publicUrl: string, path: string) =>
  `${publicUrl}/.well-known/oauth-protected-resource${path}`;

/** Whether `path` is an MCP endpoint: the catalogue or an app's (any well-formed slug), under /api or /api/v1. */
export function isMcpPath(path: string): boolean {
  const match = /^\/api(?:\/v1)?\/(?:mcp|app\/([^/?#]+)\/mcp)$/.exec(path);
  return match !== null && (match[1] === undefined || SLUG_PATTERN.test(match[1]));
}

/** Whether `resource` (an RFC 8707 resource indicator) names one of our MCP endpoints. */
export function isMcpResource(publicUrl: string, resource: string): boolean {
  return resource.startsWith(`${publicUrl}/`) && isMcpPath(resource.slice(publicUrl.length));
}

/** RFC 9728 Protected Resource Metadata of the endpoint at `path`. */
export function protectedResourceMetadata(
  publicUrl: string,
  path: string,
  authorizationServer: string | undefined,
) {
  return {
    resource: `${publicUrl}${path}`,
    authorization_servers: authorizationServer ? [authorizationServer] : [],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: path.includes("/app/") ? "Promptmint app" : "Promptmint apps",
    resource_documentation: `${publicUrl}/api/docs`,
  };
}

/** The 401 challenge of an MCP endpoint (MCP authorization, RFC 9728 §5.1). */
export function mcpChallenge(publicUrl: string, path: string, error?: string): string {
  const params = [
    ...(error ? [`error="${error}"`] : []),
    `resource_metadata="${resourceMetadataUrl(publicUrl, path)}"`,
    `scope="${MCP_SCOPE}"`,
  ];
  return `Bearer ${params.join(", ")}`;
}
