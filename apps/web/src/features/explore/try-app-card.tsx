import type { ExploreAppDetail, IoSchema } from "@promptmint/contracts";
import { LogIn, Play, UserPlus, Wallet } from "lucide-react";
import { type FormEvent, useState } from "react";
import { useAuth } from "react-oidc-context";
import { useLocation } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextareaField } from "../../components/ui/textarea-field";
import { AnswerText, UsageSummary } from "../../components/ui/usage-summary";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents } from "../../lib/format";
import { useTryExploreApp } from "./api/try-explore-app";
import { AppInputFields, type InputTexts, inputValuesOf } from "./app-input-fields";

const INPUT_FIELD_PREFIX = "inputs.";

/** Problems the server named per input (`inputs.topic`), keyed by the input's name. */
function inputErrorsOf(error: unknown): Record<string, string> {
  if (!(error instanceof ApiClientError) || !error.fields) return {};
  return Object.fromEntries(
    Object.entries(error.fields)
      .filter(([field]) => field.startsWith(INPUT_FIELD_PREFIX))
      .map(([field, problem]) => [field.slice(INPUT_FIELD_PREFIX.length), problem]),
  );
}

/** 'Try it': signed-in people run the app (paid like any call); visitors are invited to sign in. */
export function TryAppCard({ app }: { app: ExploreAppDetail }) {
  const { isAuthenticated } = useAuth();
  const location = useLocation();
  const price = formatCents(app.price_cents);

  return (
    <Card>
      <CardHeader
        title="Try it"
        description={`Each run is a real call: ${price} from your wallet, or free within a plan you subscribe to.`}
      />
      <CardBody>
        {isAuthenticated ? (
          <TryAppForm app={app} />
        ) : (
          <div className="flex flex-col items-start gap-4">
            <p className="text-sm text-slate-600">
              Sign in to run {app.name} with your own inputs. New here? Creating an account takes a minute.
            </p>
            <div className="flex flex-wrap gap-2">
              <ButtonLink to="/login" state={{ from: location }}>
                <LogIn className="size-4" aria-hidden="true" />
                Sign in to try
              </ButtonLink>
              <ButtonLink to="/register" variant="secondary" state={{ from: location }}>
                <UserPlus className="size-4" aria-hidden="true" />
                Sign up
              </ButtonLink>
            </div>
          </div>
        )}
      </CardBody>
    </Card>
  );
}

/**
 * A chat app (or workflow) whose input schema has a `query` field: the gateway fills that input
 * from the message, so the Message box is the field and the schema's own control is left out.
 */
function messageIsQueryInput(app: ExploreAppDetail): boolean {
  return app.takes_query && "query" in app.input_schema.properties;
}

/** The inputs the form shows controls for: all but a `query` the Message box stands for. */
function shownInputSchema(app: ExploreAppDetail): IoSchema {
  if (!messageIsQueryInput(app)) return app.input_schema;
  const { query: _query, ...properties } = app.input_schema.properties;
  return {
    ...app.input_schema,
    properties,
    required: app.input_schema.required.filter((name) => name !== "query"),
  };
}

function TryAppForm({ app }: { app: ExploreAppDetail }) {
  const run = useTryExploreApp(app.slug);
  const inputSchema = shownInputSchema(app);
  const queryInput = messageIsQueryInput(app) ? app.input_schema.properties.query : undefined;
  const [texts, setTexts] = useState<InputTexts>({});
  const [query, setQuery] = useState("");
  const [problems, setProblems] = useState<Record<string, string>>({});
  const inputErrors = { ...inputErrorsOf(run.error), ...problems };
  const needsPayment = run.error instanceof ApiClientError && run.error.status === 402;
  // Problems the form shows beside their fields need no banner as well.
  const shownByFields =
    run.error instanceof ApiClientError &&
    Object.keys(run.error.fields ?? {}).length > 0 &&
    Object.keys(run.error.fields ?? {}).every((field) =>
      field === "query"
        ? app.takes_query
        : field.startsWith(INPUT_FIELD_PREFIX) &&
          field.slice(INPUT_FIELD_PREFIX.length) in app.input_schema.properties,
    );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { values, problems: found } = inputValuesOf(inputSchema, texts);
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    // Never charged more than the price this page shows (a 412 if it rose since it loaded).
    run.mutate({
      inputs: values,
      ...(app.takes_query && query.trim() ? { query } : {}),
      max_price_cents: app.price_cents,
    });
  };

  return (
    <div className="space-y-5">
      <form onSubmit={submit} noValidate className="space-y-4">
        <AppInputFields
          schema={inputSchema}
          texts={texts}
          errors={inputErrors}
          onChange={(name, text) => setTexts((current) => ({ ...current, [name]: text }))}
        />
        {app.takes_query && (
          <TextareaField
            label={app.interaction_mode === "chat" || app.type === "workflow" ? "Message" : "Input"}
            rows={3}
            placeholder={queryInput?.description || "Type what to send…"}
            value={query}
            error={
              (run.error instanceof ApiClientError ? run.error.fields?.query : undefined) ?? inputErrors.query
            }
            onChange={(event) => setQuery(event.target.value)}
          />
        )}
        <Button type="submit" busy={run.isPending}>
          {!run.isPending && <Play className="size-4" aria-hidden="true" />}
          {run.isPending ? "Running..." : `Run (${formatCents(app.price_cents)})`}
        </Button>
      </form>

      {needsPayment ? (
        <Alert tone="warning" role="alert" title="Your wallet needs a top-up">
          <p>{`This call costs ${formatCents(app.price_cents)}. Add funds to your wallet, then run it again.`}</p>
          <ButtonLink to="/wallet" size="sm" className="mt-2">
            <Wallet className="size-4" aria-hidden="true" />
            Top up wallet
          </ButtonLink>
        </Alert>
      ) : (
        run.isError && !shownByFields && <Alert tone="error">{getErrorMessage(run.error)}</Alert>
      )}

      {run.isSuccess && (
        <section aria-label="Answer" className="space-y-3">
          <h3 className="text-sm font-semibold text-slate-900">Answer</h3>
          <AnswerText answer={run.data.answer} />
          <UsageSummary usage={run.data.metadata.usage} />
        </section>
      )}
    </div>
  );
}
