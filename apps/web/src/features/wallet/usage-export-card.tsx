import { Download } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { downloadUsageCsv } from "../../lib/receipts";
import { useWalletStatement } from "./api/get-wallet-statement";
import { useExportKeys } from "./api/list-export-keys";

type Field = "from" | "to" | "key" | "app";

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
/** The first of this UTC month: the export's default start. */
const monthStart = (now: Date) => isoDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));

/**
 * The spend export (docs/decisions/069): the calls charged to the wallet between two UTC dates,
 * for one key and one app or all, as a CSV file. The apps offered are those the statement has
 * loaded (the apps paid for recently).
 */
export function UsageExportCard() {
  const today = isoDay(new Date());
  const [form, setForm] = useState<Record<Field, string>>({
    from: monthStart(new Date()),
    to: today,
    key: "",
    app: "",
  });
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const keys = useExportKeys();
  const statement = useWalletStatement();
  const apps = new Map<string, string>();
  for (const line of statement.data?.pages.flatMap((page) => page.lines) ?? [])
    if (line.application) apps.set(line.application.slug, line.application.name);

  const set = (field: Field) => (event: { target: { value: string } }) => {
    setForm((current) => ({ ...current, [field]: event.target.value }));
    setErrors((current) => {
      const { [field]: _gone, ...rest } = current;
      return rest;
    });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(null);
    if (!form.from || !form.to) {
      setErrors({
        ...(form.from ? {} : { from: "Choose a start date" }),
        ...(form.to ? {} : { to: "Choose an end date" }),
      });
      return;
    }
    if (form.to < form.from) {
      setErrors({ to: "must be on or after the start date" });
      return;
    }
    setBusy(true);
    try {
      await downloadUsageCsv({
        from: form.from,
        to: form.to,
        key: form.key || undefined,
        app: form.app || undefined,
      });
    } catch (error) {
      if (error instanceof ApiClientError && error.fields)
        setErrors(error.fields as Partial<Record<Field, string>>);
      setFailure(getErrorMessage(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card>
      <CardHeader
        title="Download usage (CSV)"
        description="Every call charged to your wallet, one row each: time, app, key, status and price."
      />
      <CardBody>
        <form className="grid gap-4 sm:grid-cols-2" onSubmit={(event) => void submit(event)} noValidate>
          <TextField
            label="From"
            type="date"
            value={form.from}
            max={today}
            onChange={set("from")}
            error={errors.from}
            required
          />
          <TextField
            label="To (included)"
            type="date"
            value={form.to}
            max={today}
            onChange={set("to")}
            error={errors.to}
            required
          />
          <SelectField
            label="API key"
            value={form.key}
            onChange={set("key")}
            error={errors.key}
            hint={keys.isError ? "Your keys could not be loaded: the export covers all of them." : undefined}
            options={[
              { value: "", label: "All keys and the web app" },
              ...(keys.data ?? []).map((key) => ({ value: key.id, label: `${key.name} (${key.prefix}…)` })),
            ]}
          />
          <SelectField
            label="App"
            value={form.app}
            onChange={set("app")}
            error={errors.app}
            options={[
              { value: "", label: "All apps" },
              ...[...apps].map(([slug, name]) => ({ value: slug, label: name })),
            ]}
          />
          {failure && (
            <div className="sm:col-span-2">
              <ErrorBox message={failure} />
            </div>
          )}
          <div className="sm:col-span-2">
            <Button type="submit" busy={busy}>
              {!busy && <Download className="size-4" aria-hidden="true" />}
              {busy ? "Preparing..." : "Download usage (CSV)"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
