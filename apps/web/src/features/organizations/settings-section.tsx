import type { Organization } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { SaveChangesButton } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { withoutErrorsFor } from "../../lib/form-errors";
import { accountMay } from "../../lib/organization-capabilities";
import { useUpdateOrganization } from "./api/organization";
import { draftOf, type OrganizationErrors, OrganizationFields, parseDraft } from "./organization-fields";

/** Name and billing details: owners and admins change them, other roles read them. */
export function SettingsSection({ organization }: { organization: Organization }) {
  const update = useUpdateOrganization();
  const [draft, setDraft] = useState(() => draftOf(organization));
  const [errors, setErrors] = useState<OrganizationErrors>({});
  const [saved, setSaved] = useState(false);
  const manage = accountMay(organization.role, "manage");

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft);
    if (parsed.errors) return setErrors(parsed.errors);
    setErrors({});
    setSaved(false);
    update.mutate(
      {
        id: organization.id,
        changes: { ...parsed.organization, billing_email: parsed.organization.billing_email ?? null },
      },
      {
        onSuccess: (next) => {
          setDraft(draftOf(next));
          setSaved(true);
        },
        onError: (failure) => {
          if (failure instanceof ApiClientError && failure.fields) setErrors(failure.fields);
        },
      },
    );
  };

  return (
    <Card>
      <CardHeader
        title="Settings"
        description={
          manage
            ? "The name members see and the details receipts print."
            : "Only owners and admins change these."
        }
      />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-4" aria-label="Organization settings">
          {saved && <Alert tone="success">Settings saved.</Alert>}
          {update.isError && Object.keys(errors).length === 0 && (
            <Alert tone="error">{getErrorMessage(update.error)}</Alert>
          )}
          <OrganizationFields
            idPrefix="organization"
            draft={draft}
            errors={errors}
            disabled={!manage}
            onChange={(next) => {
              const changed = (Object.keys(next) as (keyof typeof next)[]).filter(
                (key) => next[key] !== draft[key],
              );
              setErrors((current) => withoutErrorsFor(current, changed));
              setSaved(false);
              setDraft(next);
            }}
          />
          {manage && (
            <div className="flex justify-end border-t border-slate-100 pt-4">
              <SaveChangesButton type="submit" saving={update.isPending} className="w-full sm:w-auto" />
            </div>
          )}
        </form>
      </CardBody>
    </Card>
  );
}
