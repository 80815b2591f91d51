import type { WorkflowTestResponse } from "@promptmint/contracts";
import { CheckCircle2, XCircle } from "lucide-react";
import { Alert } from "../../components/ui/alert";
import { getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";

function displayValueOf(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

/**
 * SPEC §2: 'Configuration Valid' / 'Configuration Error' with the message and what the provider
 * said about the app (app_info); a failed request reads 'Test failed: {message}' (SPEC §8).
 */
export function WorkflowTestResult({ result, error }: { result?: WorkflowTestResponse; error?: unknown }) {
  if (error) {
    return <Alert tone="error">{`Test failed: ${getErrorMessage(error)}`}</Alert>;
  }
  if (!result) return null;
  const Icon = result.success ? CheckCircle2 : XCircle;
  const appInfo = Object.entries(result.app_info ?? {});

  return (
    <section
      aria-label="Test result"
      role="status"
      className={cn(
        "space-y-3 rounded-lg border p-4",
        result.success ? "border-green-200 bg-green-50/60" : "border-red-200 bg-red-50/60",
      )}
    >
      <div className="flex items-start gap-2">
        <Icon
          className={cn("mt-0.5 size-5 shrink-0", result.success ? "text-green-600" : "text-red-600")}
          aria-hidden="true"
        />
        <div className="min-w-0">
          <h3 className={cn("font-semibold", result.success ? "text-green-800" : "text-red-800")}>
            {result.success ? "Configuration Valid" : "Configuration Error"}
          </h3>
          {result.message && <p className="mt-1 text-sm break-words text-slate-700">{result.message}</p>}
          {result.error && result.error !== result.message && (
            <p className="mt-1 text-sm break-words text-red-700">{result.error}</p>
          )}
        </div>
      </div>
      {appInfo.length > 0 && (
        <div>
          <h4 className="mb-1.5 text-sm font-medium text-slate-700">App Info</h4>
          <dl className="divide-y divide-slate-100 rounded-md border border-slate-200 bg-white text-sm">
            {appInfo.map(([key, value]) => (
              <div key={key} className="grid gap-1 px-3 py-2 sm:grid-cols-3 sm:gap-3">
                <dt className="font-mono text-xs text-slate-500 sm:pt-0.5">{key}</dt>
                <dd className="break-words text-slate-800 sm:col-span-2">{displayValueOf(value)}</dd>
              </div>
            ))}
          </dl>
        </div>
      )}
    </section>
  );
}
