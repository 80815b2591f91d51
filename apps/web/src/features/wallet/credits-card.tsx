import type { SponsoredCredit } from "@promptmint/contracts";
import { Gift } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Link } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { formatDate, formatMicros, formatNumber } from "../../lib/format";
import { useCredits, useRedeemPromotionCode } from "./api/credits";

/** What is left of a credit, in the product's words. */
function leftOf(credit: SponsoredCredit): string {
  if (credit.kind === "trial") {
    const calls = credit.calls_left ?? 0;
    return `${formatNumber(calls)} free ${calls === 1 ? "call" : "calls"} left`;
  }
  const left = `${formatMicros(credit.credit_left_micros ?? 0)} left`;
  return credit.bonus
    ? `${left}; ${credit.bonus.percent}% of your next top-up (up to ${formatMicros(credit.bonus.cap_micros)}) to come`
    : left;
}

function CreditRow({ credit }: { credit: SponsoredCredit }) {
  const where = credit.app ? (
    <Link to={`/explore/${credit.app.slug}`} className="font-medium text-brand-700 hover:underline">
      {credit.app.name}
    </Link>
  ) : (
    <span className="font-medium text-slate-900">every app of {credit.creator}</span>
  );
  return (
    <li className="flex flex-wrap items-start justify-between gap-2 py-3">
      <div className="min-w-0">
        <div className="flex flex-wrap items-center gap-2">
          <Badge tone={credit.kind === "trial" ? "blue" : "brand"}>
            {credit.kind === "trial" ? "Free trial" : "Promotion"}
          </Badge>
          {credit.code && <span className="font-mono text-xs text-slate-500">{credit.code}</span>}
        </div>
        <p className="mt-1 text-sm text-slate-600">On {where}</p>
      </div>
      <div className="text-right text-sm">
        <p className="font-medium text-slate-900">{leftOf(credit)}</p>
        <p className="text-xs text-slate-500">
          {credit.expires_at ? `Expires ${formatDate(credit.expires_at)}` : "Does not expire"}
        </p>
      </div>
    </li>
  );
}

function RedeemForm() {
  const redeem = useRedeemPromotionCode();
  const [code, setCode] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [redeemed, setRedeemed] = useState<SponsoredCredit | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim() === "") {
      setError("Enter a promotion code");
      return;
    }
    setError(undefined);
    setRedeemed(null);
    redeem.mutate(code.trim(), {
      onSuccess: (credit) => {
        setRedeemed(credit);
        setCode("");
      },
      onError: (failure) => setError(getErrorMessage(failure)),
    });
  };

  return (
    <form onSubmit={submit} noValidate className="space-y-3" aria-label="Redeem a promotion code">
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
        <TextField
          label="Redeem a code"
          name="promotion-code"
          autoComplete="off"
          value={code}
          onChange={(event) => setCode(event.target.value)}
          error={error}
          className="flex-1"
          placeholder="e.g. LAUNCH20"
        />
        <Button type="submit" disabled={redeem.isPending} className="sm:mt-6">
          {redeem.isPending ? "Redeeming..." : "Redeem"}
        </Button>
      </div>
      {redeemed && (
        <Alert tone="success" title="Code redeemed">
          {leftOf(redeemed)} on {redeemed.app ? redeemed.app.name : `every app of ${redeemed.creator}`}.
        </Alert>
      )}
    </form>
  );
}

/** The wallet's "Trials and promotional credit": what creators pay for on the caller's behalf. */
export function CreditsCard() {
  const credits = useCredits();
  return (
    <Card>
      <CardHeader
        title="Trials and promotional credit"
        description="Calls a creator pays for: free trials and promotion codes. They are used before your balance."
      />
      <CardBody className="space-y-4">
        <RedeemForm />
        <QueryStates query={credits} loading="Loading credits..." error="Failed to load your credits">
          {(data) =>
            data.data.length === 0 ? (
              <EmptyState
                framed={false}
                icon={Gift}
                title="No trials or promotional credit yet"
                description="Start a free trial on an app's page in Explore, or redeem a creator's code above."
              />
            ) : (
              <ul className="divide-y divide-slate-100">
                {data.data.map((credit) => (
                  <CreditRow key={credit.id} credit={credit} />
                ))}
              </ul>
            )
          }
        </QueryStates>
      </CardBody>
    </Card>
  );
}
