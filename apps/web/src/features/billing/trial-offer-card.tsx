import { MAX_TRIAL_CALLS } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { NumberField, rangeProblem } from "../../components/ui/number-field";
import { QueryStates } from "../../components/ui/query-states";
import { getErrorMessage } from "../../lib/api-client";
import { formatNumber } from "../../lib/format";
import { useSaveTrialOffer, useTrialOffer } from "./api/trial-offer";

const LIMITS = { min: 0, max: MAX_TRIAL_CALLS, step: 1 };

/** The owner offers a free trial: N calls per consumer, paid from the owner's wallet (decision 080). */
export function TrialOfferCard({ appSlug }: { appSlug: string }) {
  const offer = useTrialOffer(appSlug);
  return (
    <Card>
      <CardHeader
        title="Free trial"
        description="Let each new consumer try this app for a few calls. You pay for them from your wallet; one trial per person (account or card)."
      />
      <CardBody>
        <QueryStates query={offer} loading="Loading trial..." error="Failed to load the free trial">
          {(data) => (
            <TrialOfferForm appSlug={appSlug} trialCalls={data.trial_calls} started={data.trials_started} />
          )}
        </QueryStates>
      </CardBody>
    </Card>
  );
}

function TrialOfferForm({
  appSlug,
  trialCalls,
  started,
}: {
  appSlug: string;
  trialCalls: number;
  started: number | null;
}) {
  const save = useSaveTrialOffer(appSlug);
  const [text, setText] = useState(String(trialCalls));
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problem = rangeProblem(text, LIMITS, true);
    setError(problem);
    setSaved(false);
    if (problem) return;
    save.mutate(Number(text), {
      onSuccess: () => setSaved(true),
      onError: (failure) => setError(getErrorMessage(failure)),
    });
  };

  return (
    <form onSubmit={submit} noValidate className="space-y-3" aria-label="Free trial">
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
        <NumberField
          label="Free calls per consumer"
          hint="0 offers no trial. Trials already started keep their calls."
          value={text}
          onChange={(event) => setText(event.target.value)}
          error={error}
          className="sm:w-64"
          {...LIMITS}
        />
        <Button type="submit" disabled={save.isPending} className="sm:mt-6">
          {save.isPending ? "Saving..." : "Save trial"}
        </Button>
      </div>
      <p className="text-sm text-slate-500">
        {trialCalls > 0
          ? `Offered: ${formatNumber(trialCalls)} free ${trialCalls === 1 ? "call" : "calls"} per consumer.`
          : "No trial offered."}{" "}
        {started !== null &&
          `${formatNumber(started)} ${started === 1 ? "consumer has" : "consumers have"} started it.`}
      </p>
      {saved && <Alert tone="success" title="Free trial saved" />}
    </form>
  );
}
