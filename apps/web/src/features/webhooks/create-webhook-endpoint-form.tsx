import type { CreatedWebhookEndpoint } from "@promptmint/contracts";
import { Plus } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useCreateWebhookEndpoint } from "./api/create-webhook-endpoint";
import { draftOf, type EndpointErrors, EndpointFields, parseDraft } from "./endpoint-fields";

export function CreateWebhookEndpointForm({
  onCreated,
}: {
  onCreated: (endpoint: CreatedWebhookEndpoint) => void;
}) {
  const create = useCreateWebhookEndpoint();
  const [draft, setDraft] = useState(() => draftOf());
  const [errors, setErrors] = useState<EndpointErrors>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft);
    if ("errors" in parsed) return setErrors(parsed.errors);
    setErrors({});
    create.mutate(parsed.endpoint, {
      onSuccess: (endpoint) => {
        setDraft(draftOf());
        onCreated(endpoint);
      },
      onError: (failure) => {
        if (failure instanceof ApiClientError && failure.fields) setErrors(failure.fields);
      },
    });
  };

  return (
    <Card>
      <CardHeader
        title="Add Endpoint"
        description="Promptmint POSTs the events you choose to this URL, retrying for about 3 days until it answers 2xx."
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4">
          {create.isError && Object.keys(errors).length === 0 && (
            <Alert tone="error">{getErrorMessage(create.error)}</Alert>
          )}
          <EndpointFields draft={draft} onChange={setDraft} errors={errors} />
          <div className="flex justify-end border-t border-slate-100 pt-4">
            <Button type="submit" busy={create.isPending} className="w-full sm:w-auto">
              {!create.isPending && <Plus className="size-4" aria-hidden="true" />}
              {create.isPending ? "Adding..." : "Add Endpoint"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
