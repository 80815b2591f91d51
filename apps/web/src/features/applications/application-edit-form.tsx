import { type Application, MIN_PRICE_CENTS, type UpdateApplication } from "@promptmint/contracts";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { VISIBILITY_OPTIONS } from "../../components/ui/basic-settings-fields";
import { Button, SaveChangesButton } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { centsOfEntry, PriceField } from "../../components/ui/price-field";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents, formatPriceNotice, priceChangeHint, scheduledPriceCents } from "../../lib/format";
import { registeredField } from "../../lib/registered-field";
import { useUpdateApplication } from "./api/update-application";

// SPEC §5: the price minimum is the input's own; the server still answers field errors.
type ApplicationEditValues = Pick<Application, "name" | "description" | "visibility" | "price_cents">;
const FIELDS = ["name", "description", "visibility", "price_cents"] as const;
type ApplicationEditField = (typeof FIELDS)[number];

/** SPEC §5: at least 1 cent, said at the field before the server is asked. */
function priceProblem(cents: number): string | true {
  return cents >= MIN_PRICE_CENTS || `Must be at least ${MIN_PRICE_CENTS} cent`;
}

/**
 * The server's field errors that belong to this form's fields: shown at those fields, instead
 * of the server's summary ('Invalid request: price_cents …') above the form.
 */
function formFieldErrorsOf(error: unknown): [ApplicationEditField, string][] {
  if (!(error instanceof ApiClientError) || !error.fields) return [];
  return Object.entries(error.fields).flatMap(([path, message]) => {
    const field = FIELDS.find((name) => name === path);
    return field ? [[field, message] as [ApplicationEditField, string]] : [];
  });
}

export function ApplicationEditForm({
  application,
  onDone,
}: {
  application: Application;
  onDone: () => void;
}) {
  const update = useUpdateApplication(application.slug);
  const form = useForm<ApplicationEditValues>({
    defaultValues: {
      name: application.name,
      description: application.description,
      visibility: application.visibility,
      price_cents: scheduledPriceCents(application),
    },
  });
  const { handleSubmit, setError, watch } = form;
  const field = registeredField(form);

  const onSubmit = handleSubmit((values) => {
    const body: UpdateApplication = { ...values };
    update.mutate(body, {
      onSuccess: (updated) => {
        const notice = formatPriceNotice(updated, " per call");
        toast.success(
          notice
            ? `Application updated. ${notice}; callers pay ${formatCents(updated.price_cents)} until then.`
            : "Application updated",
        );
        onDone();
      },
      onError: (error) => {
        for (const [field, message] of formFieldErrorsOf(error)) setError(field, { type: "server", message });
      },
    });
  });

  return (
    <Card>
      <CardHeader title="Edit Application" />
      <CardBody>
        <form onSubmit={onSubmit} noValidate className="space-y-5">
          {update.isError && formFieldErrorsOf(update.error).length === 0 && (
            <Alert tone="error">{getErrorMessage(update.error)}</Alert>
          )}
          <TextField label="Name" {...field("name")} />
          <TextareaField label="Description" rows={3} {...field("description")} />
          <div className="grid gap-5 sm:grid-cols-2">
            <SelectField label="Visibility" options={VISIBILITY_OPTIONS} {...field("visibility")} />
            <PriceField
              unit="cents"
              min={MIN_PRICE_CENTS}
              amount={watch("price_cents")}
              note={
                priceChangeHint(application, " per call") ??
                "A lower price applies at once; a higher one is announced to callers and applies after a notice period."
              }
              error={form.formState.errors.price_cents?.message}
              {...form.register("price_cents", { setValueAs: centsOfEntry, validate: priceProblem })}
            />
          </div>
          <div className="flex flex-col-reverse gap-3 border-t border-slate-100 pt-5 sm:flex-row sm:justify-end">
            <Button variant="secondary" onClick={onDone} disabled={update.isPending}>
              Cancel
            </Button>
            <SaveChangesButton type="submit" saving={update.isPending} />
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
