import type { PromotionCode } from "@promptmint/contracts";
import { Ticket } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { CopyButton } from "../../components/ui/copy-button";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { QueryStates } from "../../components/ui/query-states";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatDate, formatMicros, formatNumber } from "../../lib/format";
import { useCreatePromotionCode, useEndPromotionCode, usePromotionCodes } from "./api/promotion-codes";

const STATUS: Record<PromotionCode["status"], { label: string; tone: BadgeTone }> = {
  active: { label: "Active", tone: "green" },
  scheduled: { label: "Scheduled", tone: "blue" },
  expired: { label: "Expired", tone: "gray" },
  used_up: { label: "Used up", tone: "yellow" },
  ended: { label: "Ended", tone: "gray" },
};

/** "$5.00 credit" or "20% of a top-up, up to $10.00". */
function codeValue(code: PromotionCode): string {
  return code.kind === "amount"
    ? `${formatMicros(code.amount_micros ?? 0)} credit`
    : `${code.percent}% of a top-up, up to ${formatMicros(code.cap_micros ?? 0)}`;
}

/** The creator's promotion codes: create one for this app (or all their apps), copy, end. */
export function PromotionCodesCard({ appSlug }: { appSlug: string }) {
  const codes = usePromotionCodes();
  return (
    <Card>
      <CardHeader
        title="Promotion codes"
        description="Codes give credit on your apps; your wallet pays for each call it covers. Each person redeems a code once."
      />
      <CardBody className="space-y-6">
        <CreateCodeForm appSlug={appSlug} />
        <QueryStates query={codes} loading="Loading codes..." error="Failed to load your promotion codes">
          {(data) =>
            data.data.length === 0 ? (
              <EmptyState framed={false} icon={Ticket} title="No promotion codes yet" />
            ) : (
              <ul className="divide-y divide-slate-100" aria-label="Your promotion codes">
                {data.data.map((code) => (
                  <CodeRow key={code.id} code={code} />
                ))}
              </ul>
            )
          }
        </QueryStates>
      </CardBody>
    </Card>
  );
}

function CodeRow({ code }: { code: PromotionCode }) {
  const end = useEndPromotionCode();
  const status = STATUS[code.status];
  const open = code.status === "active" || code.status === "scheduled";
  return (
    <li aria-label={code.code} className="flex flex-wrap items-center justify-between gap-3 py-3">
      <div className="min-w-0">
        <p className="flex flex-wrap items-center gap-2">
          <span className="font-mono text-sm font-semibold text-slate-900">{code.code}</span>
          <Badge tone={status.tone}>{status.label}</Badge>
        </p>
        <p className="text-xs text-slate-500">
          {codeValue(code)} · {code.app ? code.app.name : "all your apps"} · {formatNumber(code.redemptions)}{" "}
          of {formatNumber(code.max_redemptions)} redeemed
          {code.expires_at && ` · expires ${formatDate(code.expires_at)}`}
        </p>
        {end.isError && <ErrorBox className="mt-2" message={getErrorMessage(end.error)} />}
      </div>
      <div className="flex items-center gap-2">
        <CopyButton text={code.code} label="Copy code" aria-label={`Copy ${code.code}`} />
        {open && (
          <Button
            variant="ghost"
            size="sm"
            className="text-red-600 hover:bg-red-50 hover:text-red-700"
            aria-label={`End ${code.code}`}
            disabled={end.isPending}
            onClick={() => end.mutate(code.id)}
          >
            End
          </Button>
        )}
      </div>
    </li>
  );
}

type Fields = Partial<Record<string, string>>;

/** Dollars typed by the creator → whole cents, or undefined when not a usable amount. */
function centsOf(text: string): number | undefined {
  if (!/^\d+(\.\d{1,2})?$/.test(text.trim())) return undefined;
  const cents = Math.round(Number(text) * 100);
  return cents >= 1 ? cents : undefined;
}

function CreateCodeForm({ appSlug }: { appSlug: string }) {
  const create = useCreatePromotionCode();
  const [code, setCode] = useState("");
  const [kind, setKind] = useState<"amount" | "percent">("amount");
  const [amount, setAmount] = useState("5");
  const [percent, setPercent] = useState("20");
  const [cap, setCap] = useState("10");
  const [maxRedemptions, setMaxRedemptions] = useState("100");
  const [expires, setExpires] = useState("");
  const [allApps, setAllApps] = useState(false);
  const [errors, setErrors] = useState<Fields>({});
  const [failure, setFailure] = useState<string | undefined>();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: Fields = {};
    if (!/^[A-Za-z0-9_-]{4,32}$/.test(code.trim())) found.code = "4 to 32 letters, digits, - or _";
    const amountCents = centsOf(amount);
    const capCents = centsOf(cap);
    if (kind === "amount" && amountCents === undefined) found.amount = "Enter an amount in dollars, e.g. 5";
    const percentValue = Number(percent);
    if (kind === "percent" && !(Number.isInteger(percentValue) && percentValue >= 1 && percentValue <= 100))
      found.percent = "Must be a whole number between 1 and 100";
    if (kind === "percent" && capCents === undefined) found.cap = "Enter a cap in dollars, e.g. 10";
    const max = Number(maxRedemptions);
    if (!(Number.isInteger(max) && max >= 1)) found.max_redemptions = "Must be a whole number of at least 1";
    setErrors(found);
    setFailure(undefined);
    if (Object.keys(found).length > 0) return;
    create.mutate(
      {
        code: code.trim(),
        kind,
        ...(kind === "amount"
          ? { amount_cents: amountCents }
          : { percent: percentValue, cap_cents: capCents }),
        max_redemptions: max,
        ...(allApps ? {} : { app: appSlug }),
        ...(expires ? { expires_at: new Date(`${expires}T23:59:59Z`).toISOString() } : {}),
      },
      {
        onSuccess: () => setCode(""),
        onError: (error) => {
          const fields = error instanceof ApiClientError ? (error.fields ?? {}) : {};
          setErrors({ ...fields, amount: fields.amount_cents, cap: fields.cap_cents });
          setFailure(getErrorMessage(error));
        },
      },
    );
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Create a promotion code" className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField
          label="Code"
          value={code}
          autoComplete="off"
          onChange={(event) => setCode(event.target.value)}
          error={errors.code}
          placeholder="LAUNCH20"
        />
        <SelectField
          label="Gives"
          value={kind}
          onChange={(event) => setKind(event.target.value === "percent" ? "percent" : "amount")}
          options={[
            { value: "amount", label: "An amount of credit" },
            { value: "percent", label: "A percentage of a top-up" },
          ]}
        />
        {kind === "amount" ? (
          <TextField
            label="Credit (USD)"
            inputMode="decimal"
            value={amount}
            onChange={(event) => setAmount(event.target.value)}
            error={errors.amount}
          />
        ) : (
          <>
            <TextField
              label="Percent of the next top-up"
              inputMode="numeric"
              value={percent}
              onChange={(event) => setPercent(event.target.value)}
              error={errors.percent}
            />
            <TextField
              label="Up to (USD)"
              inputMode="decimal"
              value={cap}
              onChange={(event) => setCap(event.target.value)}
              error={errors.cap}
            />
          </>
        )}
        <TextField
          label="Most redemptions"
          inputMode="numeric"
          value={maxRedemptions}
          onChange={(event) => setMaxRedemptions(event.target.value)}
          error={errors.max_redemptions}
        />
        <TextField
          label="Expires (optional)"
          type="date"
          value={expires}
          onChange={(event) => setExpires(event.target.value)}
          error={errors.expires_at}
        />
      </div>
      <CheckboxField
        label="Good on all my apps (not only this one)"
        checked={allApps}
        onChange={(event) => setAllApps(event.target.checked)}
      />
      {failure && <ErrorBox message={failure} />}
      <Button type="submit" disabled={create.isPending}>
        {create.isPending ? "Creating..." : "Create code"}
      </Button>
    </form>
  );
}
