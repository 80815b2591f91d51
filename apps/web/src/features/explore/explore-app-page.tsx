import type { ExploreAppDetail } from "@promptmint/contracts";
import { ArrowLeft } from "lucide-react";
import { Link, useParams } from "react-router";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { QueryStates } from "../../components/ui/query-states";
import { exampleInputsOf } from "../../lib/example-inputs";
import { formatCents, formatNumber, formatPriceNotice } from "../../lib/format";
import { useRuntimeConfig } from "../../lib/runtime-config";
import { useExploreApp } from "./api/get-explore-app";
import { HealthCard, HealthLine } from "./app-health";
import { CodeSamplesCard } from "./code-samples-card";
import { AppKindBadges } from "./explore-app-card";
import { ExplorePlansCard } from "./explore-plans-card";
import { FreeTrialCard } from "./free-trial-card";
import { McpClientCard } from "./mcp-client-card";
import { RatingSummaryLine } from "./rating-stars";
import { ReviewsSection } from "./reviews-section";
import { TryAppCard } from "./try-app-card";

/** /explore/{slug}: a public app, to try and to call. */
export function ExploreAppPage() {
  const { slug = "" } = useParams();
  const app = useExploreApp(slug);

  return (
    <PageContainer>
      <Link
        to="/explore"
        className="mb-6 inline-flex items-center gap-1.5 text-sm font-medium text-slate-600 hover:text-slate-900"
      >
        <ArrowLeft className="size-4" aria-hidden="true" />
        Explore
      </Link>
      <QueryStates query={app} loading="Loading app...">
        {(data) => <ExploreAppDetails app={data} />}
      </QueryStates>
    </PageContainer>
  );
}

function ExploreAppDetails({ app }: { app: ExploreAppDetail }) {
  const { public_url } = useRuntimeConfig();
  const mode = app.type === "prompt" && app.interaction_mode === "chat" ? "chat" : "completion";
  return (
    <>
      <PageHeader
        title={app.name}
        description={
          <>
            by {app.creator_name}
            <a href="#reviews" className="mt-1 block w-fit rounded hover:underline">
              <RatingSummaryLine rating={app.rating} />
            </a>
            <HealthLine health={app.health} className="mt-1" />
          </>
        }
        actions={
          <div className="sm:text-right">
            <p className="text-2xl font-semibold text-slate-900 tabular-nums">
              {formatCents(app.price_cents)}
            </p>
            <p className="text-sm text-slate-500">per call</p>
            {formatPriceNotice(app, " per call") && (
              <p className="text-sm text-amber-700">{formatPriceNotice(app, " per call")}</p>
            )}
            {app.max_input_tokens !== null && (
              // What a call may carry at this price (decision 063): more is refused, unpaid.
              <p className="text-sm text-slate-500">
                Up to {formatNumber(app.max_input_tokens)} input tokens a call
              </p>
            )}
          </div>
        }
      />
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="min-w-0 space-y-6 lg:col-span-2">
          <FreeTrialCard app={app} />
          <TryAppCard app={app} />
          <CodeSamplesCard
            target={{
              origin: public_url,
              slug: app.slug,
              mode,
              inputNames: Object.keys(app.input_schema.properties),
              exampleInputs: exampleInputsOf(app.input_schema),
              takesQuery: app.takes_query,
            }}
          />
          <ReviewsSection app={app} />
          <McpClientCard origin={public_url} slug={app.slug} />
        </div>
        <div className="space-y-6">
          <HealthCard health={app.health} />
          <Card>
            <CardHeader title="About" />
            <CardBody className="space-y-4">
              <p className="text-sm whitespace-pre-line text-slate-700">
                {app.description || <span className="text-slate-400">No description</span>}
              </p>
              <div className="flex flex-wrap gap-2">
                <AppKindBadges app={app} />
              </div>
              {app.accepts_tools && (
                <p className="text-sm text-slate-600">
                  This app accepts tools: send <code>tools</code> through the OpenAI-compatible API and it can
                  take part in your agent's tool loop. Each model call of the loop is one paid call.
                </p>
              )}
              <dl className="grid grid-cols-2 gap-3 text-sm">
                <div>
                  <dt className="text-slate-500">Creator</dt>
                  <dd className="font-medium text-slate-900">{app.creator_name}</dd>
                </div>
                <div>
                  <dt className="text-slate-500">Endpoint</dt>
                  <dd className="font-mono text-xs break-all text-slate-900">/{app.slug}</dd>
                </div>
              </dl>
            </CardBody>
          </Card>
          <ExplorePlansCard app={app} />
        </div>
      </div>
    </>
  );
}
