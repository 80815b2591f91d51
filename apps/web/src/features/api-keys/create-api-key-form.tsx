import type { CreatedApiKey } from "@promptmint/contracts";
import { KeyRound } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useCreateApiKey } from "../../lib/api-keys/create-api-key";
import { draftOf, type KeyOptionErrors, KeyOptionsFields, parseDraft } from "./key-options-fields";

export function CreateApiKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const create = useCreateApiKey();
  const [name, setName] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [draft, setDraft] = useState(() => draftOf());
  const [optionErrors, setOptionErrors] = useState<KeyOptionErrors>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft);
    setOptionErrors("errors" in parsed ? parsed.errors : {});
    if (name.trim() === "") {
      setError("Key name is required");
      return;
    }
    setError(undefined);
    if ("errors" in parsed) return;
    create.mutate(
      { name: name.trim(), ...parsed.options },
      {
        onSuccess: (key) => {
          setName("");
          setDraft(draftOf());
          onCreated(key);
        },
        onError: (failure) => {
          if (!(failure instanceof ApiClientError) || !failure.fields) return;
          setError(failure.fields.name);
          setOptionErrors(failure.fields);
        },
      },
    );
  };
  const fieldErrors = error !== undefined || Object.keys(optionErrors).length > 0;

  return (
    <Card>
      <CardHeader
        title="Create API Key"
        description="Name it after where it will be used, e.g. 'Production server'."
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4">
          {create.isError && !fieldErrors && <Alert tone="error">{getErrorMessage(create.error)}</Alert>}
          <TextField
            label="Key Name"
            maxLength={100}
            autoComplete="off"
            placeholder="Production server"
            value={name}
            error={error}
            onChange={(event) => setName(event.target.value)}
          />
          <fieldset className="space-y-3">
            <legend className="text-sm font-semibold text-slate-900">Limits (optional)</legend>
            <p className="text-sm text-slate-500">
              Safe to hand to software: cap what the key can spend, when it stops working, and which apps it
              may call. You can change these later.
            </p>
            <KeyOptionsFields draft={draft} onChange={setDraft} errors={optionErrors} />
          </fieldset>
          {/* Last, after the optional limits: a key is created with what the whole form says. */}
          <div className="flex justify-end border-t border-slate-100 pt-4">
            <Button type="submit" busy={create.isPending} className="w-full sm:w-auto">
              {!create.isPending && <KeyRound className="size-4" aria-hidden="true" />}
              {create.isPending ? "Creating..." : "Create Key"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
