import { API_KEY_PLACEHOLDER } from "./code-samples";

/** The MCP endpoint of one app, and of the catalogue of every public app. */
export const appMcpUrl = (origin: string, slug: string) => `${origin}/api/app/${slug}/mcp`;
export const catalogueMcpUrl = (origin: string) => `${origin}/api/mcp`;

export interface McpClientConfig {
  id: "api-key" | "sign-in";
  label: string;
  code: string;
}

/**
 * The `mcpServers` entry that Claude Desktop, Cursor and similar clients read: with an API key
 * in a header, or with the URL alone, the client then signing the user in (OAuth).
 */
export function mcpClientConfigsOf(origin: string, slug: string): McpClientConfig[] {
  const url = appMcpUrl(origin, slug);
  const config = (server: object) => JSON.stringify({ mcpServers: { [slug]: server } }, null, 2);
  return [
    {
      id: "api-key",
      label: "With an API key",
      code: config({ url, headers: { Authorization: `Bearer ${API_KEY_PLACEHOLDER}` } }),
    },
    { id: "sign-in", label: "With sign-in (OAuth)", code: config({ url }) },
  ];
}
