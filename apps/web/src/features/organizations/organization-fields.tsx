import { CreateOrganizationSchema, type Organization } from "@promptmint/contracts";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";

/** The organization's name and billing details as typed (an empty email: none). */
export interface OrganizationDraft {
  name: string;
  billing_email: string;
  billing_address: string;
  tax_id: string;
}

export type OrganizationErrors = Partial<Record<keyof OrganizationDraft, string>>;

export function draftOf(organization?: Organization): OrganizationDraft {
  return {
    name: organization?.name ?? "",
    billing_email: organization?.billing_email ?? "",
    billing_address: organization?.billing_address ?? "",
    tax_id: organization?.tax_id ?? "",
  };
}

/** The draft checked by the contract's rules (the API's messages), or the field errors. */
export function parseDraft(draft: OrganizationDraft) {
  const parsed = CreateOrganizationSchema.safeParse({
    ...draft,
    billing_email: draft.billing_email.trim() === "" ? null : draft.billing_email,
  });
  if (parsed.success) return { organization: parsed.data };
  const errors: OrganizationErrors = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path[0] as keyof OrganizationDraft;
    errors[field] ??= `${FIELD_LABELS[field] ?? "This field"} ${issue.message}`;
  }
  return { errors };
}

const FIELD_LABELS: Record<keyof OrganizationDraft, string> = {
  name: "Name",
  billing_email: "Billing email",
  billing_address: "Address",
  tax_id: "Tax ID",
};

/** Name, billing email, address and tax ID: what receipts print under the organization's name. */
export function OrganizationFields({
  draft,
  onChange,
  errors,
  disabled = false,
  idPrefix,
}: {
  draft: OrganizationDraft;
  onChange: (draft: OrganizationDraft) => void;
  errors: OrganizationErrors;
  disabled?: boolean;
  /** Keeps the ids unique when two forms are on one page. */
  idPrefix: string;
}) {
  const field = (name: keyof OrganizationDraft) => ({
    id: `${idPrefix}-${name}`,
    value: draft[name],
    error: errors[name],
    disabled,
    onChange: (event: { target: { value: string } }) => onChange({ ...draft, [name]: event.target.value }),
  });
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      <TextField label="Name" required autoComplete="organization" {...field("name")} />
      <TextField
        label="Billing email"
        type="email"
        autoComplete="email"
        hint="Receipts go here; your own address when empty."
        {...field("billing_email")}
      />
      <TextareaField
        label="Address"
        rows={3}
        hint="As printed on receipts."
        className="sm:col-span-2"
        {...field("billing_address")}
      />
      <TextField label="Tax ID" hint="A VAT or other tax number, printed on receipts." {...field("tax_id")} />
    </div>
  );
}
