import type { TestConfigResponse } from "@promptmint/contracts";
import { CheckCircle2, XCircle } from "lucide-react";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { getErrorMessage } from "../../lib/api-client";

/**
 * SPEC §2: 'Template Valid' / 'Template Error' with the message, the rendered template and the
 * detected variables; a failed request reads 'Test failed: {message}' (SPEC §8).
 */
export function TestResultPanel({ result, error }: { result?: TestConfigResponse; error?: unknown }) {
  if (error) {
    return <Alert tone="error">{`Test failed: ${getErrorMessage(error)}`}</Alert>;
  }
  if (!result) return null;
  const Icon = result.success ? CheckCircle2 : XCircle;

  return (
    <section
      aria-label="Test result"
      role="status"
      className={
        "space-y-4 rounded-lg border p-4 " +
        (result.success ? "border-green-200 bg-green-50/60" : "border-red-200 bg-red-50/60")
      }
    >
      <div className="flex items-start gap-2">
        <Icon
          className={`mt-0.5 size-5 shrink-0 ${result.success ? "text-green-600" : "text-red-600"}`}
          aria-hidden="true"
        />
        <div className="min-w-0">
          <h3 className={`font-semibold ${result.success ? "text-green-800" : "text-red-800"}`}>
            {result.success ? "Template Valid" : "Template Error"}
          </h3>
          {result.message && <p className="mt-1 text-sm text-slate-700">{result.message}</p>}
          {result.error && <p className="mt-1 text-sm break-words text-red-700">{result.error}</p>}
        </div>
      </div>
      {result.rendered_template !== null && (
        <div>
          <h4 className="mb-1.5 text-sm font-medium text-slate-700">Rendered Template</h4>
          <pre className="max-h-64 overflow-auto rounded-md border border-slate-200 bg-white p-3 font-mono text-xs whitespace-pre-wrap text-slate-800">
            {result.rendered_template}
          </pre>
        </div>
      )}
      <div>
        <h4 className="mb-1.5 text-sm font-medium text-slate-700">Detected Variables</h4>
        {result.detected_variables.length === 0 ? (
          <p className="text-sm text-slate-500">None</p>
        ) : (
          <ul className="flex flex-wrap gap-1.5">
            {result.detected_variables.map((name) => (
              <li key={name}>
                <Badge tone="brand" className="font-mono">
                  {name}
                </Badge>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
