import type { Application } from "@promptmint/contracts";
import { Save, Wallet } from "lucide-react";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CopyButton } from "../../components/ui/copy-button";
import { Money } from "../../components/ui/money";
import { QueryStates } from "../../components/ui/query-states";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents } from "../../lib/format";
import { useWallet } from "../../lib/wallet-query";
import { useEmbedSettings } from "./api/get-embed-settings";
import { useUpdateEmbedSettings } from "./api/update-embed-settings";
import { EmbedSpendingForm } from "./embed-spending-form";

const linesOf = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);

/** `{"allowed_origins.1": "must be…"}` → `ftp://x must be…`, naming the line the creator typed. */
function originsError(error: unknown, origins: string[]): string | undefined {
  if (!(error instanceof ApiClientError) || !error.fields) return undefined;
  return Object.entries(error.fields)
    .map(([path, message]) => {
      const index = /^allowed_origins\.(\d+)$/.exec(path)?.[1];
      return index === undefined ? message : `${origins[Number(index)]} ${message}`;
    })
    .join("; ");
}

/** For apps with visibility embed: the sites allowed to show the widget, the snippet, and who pays. */
export function EmbedPanel({ application }: { application: Application }) {
  const settings = useEmbedSettings(application.slug);

  return (
    <Card>
      <CardHeader
        title="Embed on Your Site"
        description={`Add a ${application.interaction_mode === "chat" ? "chat" : "completion"} widget to the websites you allow.`}
      />
      <CardBody className="space-y-5">
        <CreatorPaysNotice priceCents={application.price_cents} />
        {application.status !== "live" && (
          <Alert tone="info" role="note">
            The widget answers once the application is live.
          </Alert>
        )}
        <QueryStates query={settings} loading="Loading embed settings...">
          {(saved) => (
            <>
              <AllowedOriginsForm slug={application.slug} saved={saved.allowed_origins} />
              <EmbedSpendingForm slug={application.slug} settings={saved} />
              <div className="space-y-2">
                <div className="flex flex-wrap items-center justify-between gap-2">
                  <h3 className="text-sm font-medium text-slate-700">Snippet</h3>
                  <CopyButton text={saved.snippet} label="Copy snippet" />
                </div>
                <figure aria-label="Embed snippet">
                  <pre className="overflow-x-auto rounded-lg bg-slate-900 px-4 py-3 font-mono text-xs text-slate-100">
                    <code>{saved.snippet}</code>
                  </pre>
                </figure>
                <p className="text-xs text-slate-500">
                  Paste it where the widget should appear, on a page of one of the allowed sites.
                </p>
              </div>
            </>
          )}
        </QueryStates>
      </CardBody>
    </Card>
  );
}

function CreatorPaysNotice({ priceCents }: { priceCents: number }) {
  const wallet = useWallet();
  return (
    <Alert tone="warning" role="note" title="You pay for your embedded traffic">
      <p>
        Calls from the widget are charged to your wallet at the app's price per call (
        {formatCents(priceCents)}), up to the daily cap you set below. Visitors don't pay; when your wallet is
        empty the widget tells them it is unavailable.
      </p>
      <div className="flex flex-wrap items-center gap-3 pt-1">
        <span>
          Your wallet balance:{" "}
          <strong>{wallet.data ? <Money micros={wallet.data.balance_micros} /> : "..."}</strong>
        </span>
        <ButtonLink to="/wallet" variant="secondary" size="sm">
          <Wallet className="size-4" aria-hidden="true" />
          Top Up Wallet
        </ButtonLink>
      </div>
    </Alert>
  );
}

function AllowedOriginsForm({ slug, saved }: { slug: string; saved: string[] }) {
  const update = useUpdateEmbedSettings(slug);
  const [text, setText] = useState(saved.join("\n"));
  const origins = linesOf(text);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate(
      { allowed_origins: origins },
      {
        onSuccess: (settings) => {
          setText(settings.allowed_origins.join("\n"));
          toast.success("Allowed origins saved");
        },
      },
    );
  };
  const fieldError = originsError(update.error, origins);

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-3">
      {update.isError && !fieldError && <Alert tone="error">{getErrorMessage(update.error)}</Alert>}
      <TextareaField
        label="Allowed origins"
        rows={3}
        placeholder="https://www.example.com"
        hint="One per line: scheme, host and port, e.g. https://www.example.com (no paths or wildcards, at most 20). Only these sites can show the widget."
        error={fieldError}
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
      <Button type="submit" size="sm" busy={update.isPending}>
        {!update.isPending && <Save className="size-4" aria-hidden="true" />}
        {update.isPending ? "Saving..." : "Save Allowed Origins"}
      </Button>
    </form>
  );
}
