import type { CreatedApiKey } from "@promptmint/contracts";
import { KeyRound } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useCreateApiKey } from "./api/create-api-key";

export function CreateApiKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const create = useCreateApiKey();
  const [name, setName] = useState("");
  const [error, setError] = useState<string | undefined>();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === "") {
      setError("Key name is required");
      return;
    }
    setError(undefined);
    create.mutate(name.trim(), {
      onSuccess: (key) => {
        setName("");
        onCreated(key);
      },
      onError: (failure) => {
        if (failure instanceof ApiClientError && failure.fields?.name) setError(failure.fields.name);
      },
    });
  };

  return (
    <Card>
      <CardHeader
        title="Create API Key"
        description="Name it after where it will be used, e.g. 'Production server'."
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4">
          {create.isError && !error && <Alert tone="error">{getErrorMessage(create.error)}</Alert>}
          <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
            <TextField
              label="Key Name"
              className="flex-1"
              maxLength={100}
              autoComplete="off"
              placeholder="Production server"
              value={name}
              error={error}
              onChange={(event) => setName(event.target.value)}
            />
            <Button type="submit" busy={create.isPending} className="sm:mt-7">
              {!create.isPending && <KeyRound className="size-4" aria-hidden="true" />}
              {create.isPending ? "Creating..." : "Create Key"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
