import type { CreatedApiKey } from "@promptmint/contracts";
import { ShieldAlert } from "lucide-react";
import { Button } from "../../components/ui/button";
import { CopyButton } from "../../components/ui/copy-button";
import { inputClasses } from "../../components/ui/text-field";
import { cn } from "../../lib/cn";

/** The full key, right after creation: the only time it is shown. */
export function CreatedApiKeyPanel({ apiKey, onDismiss }: { apiKey: CreatedApiKey; onDismiss: () => void }) {
  return (
    <section
      aria-labelledby="created-key-heading"
      className="rounded-xl border-2 border-green-300 bg-green-50 p-5 shadow-sm"
    >
      <div className="flex items-start gap-3">
        <ShieldAlert className="mt-0.5 size-5 shrink-0 text-green-700" aria-hidden="true" />
        <div className="min-w-0 flex-1 space-y-3">
          <div>
            <h2 id="created-key-heading" className="font-semibold text-green-900">
              API key “{apiKey.name}” created
            </h2>
            <p id="created-key-note" className="mt-1 text-sm text-green-800">
              Copy this key now and store it somewhere safe. It won't be shown again.
            </p>
          </div>
          <div className="flex flex-col gap-2 sm:flex-row">
            <label htmlFor="created-key-value" className="sr-only">
              New API key
            </label>
            {/* A monospace input of fixed height (h-10) clips the key's underscores in Chromium at
                1x (DejaVu Sans Mono draws them below the editor's line box): this one takes its
                height from padding and a 1.6 line instead, which shows them at any width. */}
            <input
              id="created-key-value"
              readOnly
              value={apiKey.key}
              aria-describedby="created-key-note"
              onFocus={(event) => event.currentTarget.select()}
              className={cn(
                inputClasses.replace("h-10 ", ""),
                "py-2 font-mono text-xs leading-[1.6] sm:text-sm",
              )}
            />
            <CopyButton text={apiKey.key} className="h-10 shrink-0" />
          </div>
          <Button variant="ghost" size="sm" onClick={onDismiss}>
            I've saved it
          </Button>
        </div>
      </div>
    </section>
  );
}
