import type { IoSchema } from "@promptmint/contracts";
import { CopyButton } from "../../components/ui/copy-button";
import { curlSampleOf, placeholderInputsOf } from "../../lib/code-samples";
import { useRuntimeConfig } from "../../lib/runtime-config";

/** A curl call of the app's completion endpoint, with the input fields as placeholders. */
export function apiUsageExampleOf(baseUrl: string, slug: string, schema: IoSchema): string {
  const target = {
    origin: baseUrl,
    slug,
    mode: "completion" as const,
    inputNames: Object.keys(schema.properties),
    takesQuery: false,
  };
  return curlSampleOf(target, { inputs: placeholderInputsOf(target.inputNames), response_mode: "blocking" });
}

export function ApiUsageExample({ slug, schema }: { slug: string; schema: IoSchema }) {
  const { public_url } = useRuntimeConfig();
  const example = apiUsageExampleOf(public_url, slug, schema);

  return (
    <section aria-labelledby="api-usage-heading" className="space-y-2">
      <div className="flex items-center justify-between gap-3">
        <h3 id="api-usage-heading" className="text-base font-semibold text-slate-900">
          API Usage Example
        </h3>
        <CopyButton text={example} label="Copy example" />
      </div>
      <pre className="overflow-x-auto rounded-lg bg-slate-900 p-4 font-mono text-xs leading-relaxed text-slate-100">
        {example}
      </pre>
    </section>
  );
}
