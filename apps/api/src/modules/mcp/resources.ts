import { SLUG_PATTERN } from "@promptmint/contracts";

/**
 * The MCP endpoints as OAuth protected resources (RFC 9728, RFC 8707): each endpoint's URL is its
 * own resource indicator, so a token an MCP client obtains is good at that endpoint only, never
 * for the rest of the API (docs/decisions/034-mcp.md).
 */

/** The one scope MCP tokens carry: calling apps, paid from the user's wallet. */
export const MCP_SCOPE = "mcp";

export const CATALOGUE_PATH = "/api/mcp";
export const appMcpPath = (slug: string) => `/api/app/${slug}/mcp`;
export const appMcpUrl = (publicUrl: string, slug: string) => `${publicUrl}${appMcpPath(slug)}`;

/** Where an endpoint's metadata is: the RFC 9728 well-known URI with the endpoint's path appended. */
export const resourceMetadataUrl = (publicUrl: string, path: string) =>
  `${publicUrl}/.well-known/oauth-protected-resource${path}`;

/** Whether `resource` names one of our MCP endpoints: the catalogue or an app's (any well-formed slug). */
export function isMcpResource(publicUrl: string, resource: string): boolean {
  if (!resource.startsWith(`${publicUrl}/`)) return false;
  const path = resource.slice(publicUrl.length);
  if (path === CATALOGUE_PATH) return true;
  const slug = /^\/api\/app\/([^/?#]+)\/mcp$/.exec(path)?.[1];
  return slug !== undefined && SLUG_PATTERN.test(slug);
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
    resource_name: path === CATALOGUE_PATH ? "Promptmint apps" : "Promptmint app",
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
