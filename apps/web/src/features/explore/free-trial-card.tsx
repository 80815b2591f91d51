import type { ExploreAppDetail } from "@promptmint/contracts";
import { Gift, LogIn } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { useLocation } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatNumber } from "../../lib/format";
import { useStartTrial, useTrial } from "./api/trial";

const calls = (n: number) => `${formatNumber(n)} ${n === 1 ? "call" : "calls"}`;

/** An app's free trial on its Explore page (decision 080): its creator pays the first N calls. */
export function FreeTrialCard({ app }: { app: ExploreAppDetail }) {
  const offered = app.trial_calls ?? 0;
  const { isAuthenticated } = useAuth();
  const location = useLocation();
  if (offered <= 0) return null;
  return (
    <Card>
      <CardHeader
        title="Free trial"
        description={`${app.creator_name} pays for your first ${calls(offered)}: no charge to your wallet.`}
      />
      <CardBody>
        {isAuthenticated ? (
          <TrialState slug={app.slug} offered={offered} />
        ) : (
          <ButtonLink to="/login" state={{ from: location }}>
            <LogIn className="size-4" aria-hidden="true" />
            Sign in to start a free trial
          </ButtonLink>
        )}
      </CardBody>
    </Card>
  );
}

function TrialState({ slug, offered }: { slug: string; offered: number }) {
  const trial = useTrial(slug, true);
  const start = useStartTrial(slug);
  if (trial.isPending) return <LoadingState label="Loading trial..." />;
  if (trial.isError) return <ErrorBox message={getErrorMessage(trial.error)} />;
  const { calls_left: left, used, trials_started: started } = trial.data;
  if (started !== null)
    return <p className="text-sm text-slate-600">This is your app: your own calls are free.</p>;
  if (left !== null)
    return (
      <Alert
        tone={left > 0 ? "success" : "info"}
        title={left > 0 ? "Your free trial is on" : "Free trial used"}
      >
        {left > 0
          ? `${calls(left)} left: run the app above, or call it with your API key.`
          : "Your free calls are used up: further calls are paid from your wallet or a plan."}
      </Alert>
    );
  if (used) return <p className="text-sm text-slate-600">You have already taken this app's free trial.</p>;
  return (
    <div className="space-y-3">
      <Button onClick={() => start.mutate()} disabled={start.isPending}>
        <Gift className="size-4" aria-hidden="true" />
        {start.isPending ? "Starting..." : `Start free trial (${calls(offered)})`}
      </Button>
      {start.isError && <ErrorBox message={getErrorMessage(start.error)} />}
    </div>
  );
}
