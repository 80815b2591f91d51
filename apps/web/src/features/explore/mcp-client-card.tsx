import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CopyButton } from "../../components/ui/copy-button";
import { API_KEY_PLACEHOLDER } from "../../lib/code-samples";
import { appMcpUrl, catalogueMcpUrl, mcpClientConfigsOf } from "../../lib/mcp-config";

/** How to add the app to an MCP client (Claude Desktop, Cursor…) as a paid tool. */
export function McpClientCard({ origin, slug }: { origin: string; slug: string }) {
  const url = appMcpUrl(origin, slug);
  const configs = mcpClientConfigsOf(origin, slug);
  return (
    <Card>
      <CardHeader
        title="Use it from an MCP client"
        description="Agents call this app as a tool, paid per call like any other call."
      />
      <CardBody className="space-y-4">
        <div className="flex flex-col gap-2 rounded-lg bg-slate-900 px-4 py-3 sm:flex-row sm:items-center sm:justify-between">
          <code className="min-w-0 font-mono text-sm break-all text-slate-100">{url}</code>
          <CopyButton text={url} label="Copy MCP URL" className="shrink-0" />
        </div>
        {configs.map((config) => (
          <section key={config.id} aria-label={config.label} className="space-y-2">
            <div className="flex items-center justify-between gap-2">
              <h3 className="text-sm font-semibold text-slate-900">{config.label}</h3>
              <CopyButton text={config.code} label="Copy config" />
            </div>
            <p className="text-sm text-slate-600">
              {config.id === "api-key" ? (
                <>
                  Replace <code className="font-mono text-slate-700">{API_KEY_PLACEHOLDER}</code> with a key
                  from{" "}
                  <a href="/api-keys" className="font-medium text-brand-600 hover:text-brand-700">
                    API Keys
                  </a>
                  .
                </>
              ) : (
                "The client opens a sign-in page and asks you to allow it to call paid apps with your wallet."
              )}
            </p>
            <pre className="overflow-x-auto rounded-lg bg-slate-900 p-4 font-mono text-xs leading-relaxed text-slate-100">
              <code>{config.code}</code>
            </pre>
          </section>
        ))}
        <p className="text-sm text-slate-600">
          Every public app at once:{" "}
          <code className="font-mono text-slate-700">{catalogueMcpUrl(origin)}</code> offers{" "}
          <code className="font-mono">search_apps</code>, <code className="font-mono">describe_app</code> and{" "}
          <code className="font-mono">call_app</code>.
        </p>
      </CardBody>
    </Card>
  );
}
