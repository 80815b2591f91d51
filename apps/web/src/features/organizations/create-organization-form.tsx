import type { Organization } from "@promptmint/contracts";
import { Plus } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { withoutErrorsFor } from "../../lib/form-errors";
import { useCreateOrganization } from "./api/organization";
import { draftOf, type OrganizationErrors, OrganizationFields, parseDraft } from "./organization-fields";

/** A new organization, the signed-in person its owner. */
export function CreateOrganizationForm({ onCreated }: { onCreated: (organization: Organization) => void }) {
  const create = useCreateOrganization();
  const [draft, setDraft] = useState(draftOf);
  const [errors, setErrors] = useState<OrganizationErrors>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft);
    if (parsed.errors) return setErrors(parsed.errors);
    setErrors({});
    create.mutate(parsed.organization, {
      onSuccess: (organization) => {
        setDraft(draftOf());
        onCreated(organization);
      },
      onError: (failure) => {
        if (failure instanceof ApiClientError && failure.fields) setErrors(failure.fields);
      },
    });
  };

  return (
    <Card id="create" className="scroll-mt-24">
      <CardHeader
        title="Create organization"
        description="A shared account for a team: its own wallet, keys, apps and receipts, with members in roles."
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4" aria-label="Create organization">
          {create.isError && Object.keys(errors).length === 0 && (
            <Alert tone="error">{getErrorMessage(create.error)}</Alert>
          )}
          <OrganizationFields
            idPrefix="new-organization"
            draft={draft}
            errors={errors}
            onChange={(next) => {
              const changed = (Object.keys(next) as (keyof typeof next)[]).filter(
                (key) => next[key] !== draft[key],
              );
              setErrors((current) => withoutErrorsFor(current, changed));
              setDraft(next);
            }}
          />
          <div className="flex justify-end border-t border-slate-100 pt-4">
            <Button type="submit" busy={create.isPending} className="w-full sm:w-auto">
              {!create.isPending && <Plus className="size-4" aria-hidden="true" />}
              {create.isPending ? "Creating..." : "Create organization"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
