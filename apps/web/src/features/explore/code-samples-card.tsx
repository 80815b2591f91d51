import type { CreatedApiKey } from "@promptmint/contracts";
import { Eye, EyeOff, KeyRound } from "lucide-react";
import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { Alert } from "../../components/ui/alert";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CopyButton } from "../../components/ui/copy-button";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../../components/ui/tabs";
import { getErrorMessage } from "../../lib/api-client";
import { useCreateApiKey } from "../../lib/api-keys/create-api-key";
import { useApiKeys } from "../../lib/api-keys/list-api-keys";
import { API_KEY_PLACEHOLDER, type AppCallTarget, codeSamplesOf } from "../../lib/code-samples";

/** A key as the page shows it until "Reveal": its prefix, then dots (`pm_a1b2c3••••••••`). */
export function maskedKeyOf(key: Pick<CreatedApiKey, "prefix">): string {
  return `${key.prefix}••••••••`;
}

/**
 * The app's call in five clients, each with a copy button. A signed-in person's keys are shown
 * only once, at creation, so the samples cannot fill one in; "Create a key for this snippet"
 * makes one and fills it in (masked until revealed; copying takes the full key).
 */
export function CodeSamplesCard({ target }: { target: AppCallTarget }) {
  const { isAuthenticated } = useAuth();
  const [snippetKey, setSnippetKey] = useState<CreatedApiKey | null>(null);
  const [revealed, setRevealed] = useState(false);
  const shownKey = snippetKey ? (revealed ? snippetKey.key : maskedKeyOf(snippetKey)) : undefined;
  const shown = codeSamplesOf({ ...target, apiKey: shownKey });
  const copied = codeSamplesOf({ ...target, apiKey: snippetKey?.key });

  return (
    <Card>
      <CardHeader
        title="Call it from your code"
        description={
          <>
            {snippetKey ? (
              "The samples carry your new key: copy one and run it."
            ) : (
              <>
                Replace <code className="font-mono text-slate-700">{API_KEY_PLACEHOLDER}</code> with a key
                from{" "}
                <a href="/api-keys" className="font-medium text-brand-600 hover:text-brand-700">
                  API Keys
                </a>
                .
              </>
            )}{" "}
            Every endpoint is described in the <ApiReferenceLink look="text" />.
          </>
        }
      />
      <CardBody className="space-y-4">
        {isAuthenticated && (
          <SnippetKey
            slug={target.slug}
            snippetKey={snippetKey}
            revealed={revealed}
            onCreated={(created) => {
              setSnippetKey(created);
              setRevealed(false);
            }}
            onToggleReveal={() => setRevealed((was) => !was)}
          />
        )}
        <Tabs defaultValue={shown[0]?.id}>
          <TabsList aria-label="Code samples" className="mb-4">
            {shown.map((sample) => (
              <TabsTrigger key={sample.id} value={sample.id}>
                {sample.label}
              </TabsTrigger>
            ))}
          </TabsList>
          {shown.map((sample, index) => (
            <TabsContent key={sample.id} value={sample.id} className="space-y-2">
              <div className="flex justify-end">
                <CopyButton text={copied[index]?.code ?? sample.code} label={`Copy ${sample.label}`} />
              </div>
              <pre className="overflow-x-auto rounded-lg bg-slate-900 p-4 font-mono text-xs leading-relaxed text-slate-100">
                <code>{sample.code}</code>
              </pre>
            </TabsContent>
          ))}
        </Tabs>
      </CardBody>
    </Card>
  );
}

function SnippetKey({
  slug,
  snippetKey,
  revealed,
  onCreated,
  onToggleReveal,
}: {
  slug: string;
  snippetKey: CreatedApiKey | null;
  revealed: boolean;
  onCreated: (key: CreatedApiKey) => void;
  onToggleReveal: () => void;
}) {
  const keys = useApiKeys();
  const create = useCreateApiKey();
  const count = keys.data?.length ?? 0;

  if (snippetKey) {
    return (
      <div className="flex flex-wrap items-center justify-between gap-3 rounded-lg border border-emerald-200 bg-emerald-50 px-4 py-3 text-sm">
        <p className="min-w-0 text-emerald-900">
          <KeyRound className="mr-1.5 inline size-4" aria-hidden="true" />
          Key <span className="font-medium">{snippetKey.name}</span>:{" "}
          <code className="font-mono break-all">{revealed ? snippetKey.key : maskedKeyOf(snippetKey)}</code>.
          It is shown only now; keep it somewhere safe.
        </p>
        <Button variant="secondary" size="sm" onClick={onToggleReveal} aria-pressed={revealed}>
          {revealed ? (
            <EyeOff className="size-4" aria-hidden="true" />
          ) : (
            <Eye className="size-4" aria-hidden="true" />
          )}
          {revealed ? "Hide" : "Reveal"}
        </Button>
      </div>
    );
  }
  return (
    <div className="space-y-3 rounded-lg border border-slate-200 bg-slate-50 px-4 py-3 text-sm">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <p className="min-w-0 text-slate-600">
          {count > 0
            ? `You have ${count === 1 ? "1 key" : `${count} keys`} (${keys.data
                ?.slice(0, 3)
                .map((key) => `${key.prefix}…`)
                .join(
                  ", ",
                )}${count > 3 ? ", …" : ""}); a key is shown only once, when it is created, so paste yours over ${API_KEY_PLACEHOLDER}, or make one for this snippet.`
            : "You have no API key yet: make one and the samples carry it."}
        </p>
        <Button
          size="sm"
          busy={create.isPending}
          onClick={() => create.mutate({ name: `Explore: ${slug}`.slice(0, 100) }, { onSuccess: onCreated })}
        >
          <KeyRound className="size-4" aria-hidden="true" />
          Create a key for this snippet
        </Button>
      </div>
      {create.isError && (
        <Alert tone="error" title="Failed to create API key">
          {getErrorMessage(create.error)}
        </Alert>
      )}
    </div>
  );
}
