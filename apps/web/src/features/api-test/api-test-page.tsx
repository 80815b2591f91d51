import { useQuery } from "@tanstack/react-query";
import { MessagesSquare } from "lucide-react";
import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { useSearchParams } from "react-router";
import { Alert } from "../../components/ui/alert";
import { EmptyState } from "../../components/ui/empty-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { useSettled } from "../../lib/use-settled";
import { appInfoOptions } from "../billing/api/get-app-info";
import { ChatPanel } from "./chat-panel";
import { CompletionPanel } from "./completion-panel";
import { TestTargetCard } from "./test-target-card";

/** /api-test, public; `?app={slug}` preselects an application. */
export function ApiTestPage() {
  const { isAuthenticated } = useAuth();
  const [searchParams] = useSearchParams();
  const [slug, setSlug] = useState(() => searchParams.get("app") ?? "");
  const [apiKey, setApiKey] = useState("");
  // The app's mode says which endpoint it answers (a completion app has no chat): asked once the
  // slug has been still for a moment, not per key typed.
  const target = useSettled(slug.trim(), 400);
  const info = useQuery({
    ...appInfoOptions(target),
    enabled: isAuthenticated && target !== "",
    retry: false,
  });
  const mode = info.data?.mode;

  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title="API Test Console"
        description="Call the completion and chat endpoints of an application and inspect the answer."
      />
      <div className="mb-6 space-y-3">
        {!isAuthenticated && (
          <Alert tone="warning" role="status">
            Authentication Required: Please log in to access your applications and test APIs.
          </Alert>
        )}
        <SandboxModelNotice />
      </div>
      <TestTargetCard
        signedIn={isAuthenticated}
        slug={slug}
        onSlugChange={setSlug}
        apiKey={apiKey}
        onApiKeyChange={setApiKey}
      />
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        {mode === "chat" ? (
          <NotThisEndpoint name={info.data?.name ?? target} answers="chat" />
        ) : (
          <CompletionPanel slug={slug} apiKey={apiKey} />
        )}
        {mode === "completion" ? (
          <NotThisEndpoint name={info.data?.name ?? target} answers="completion" />
        ) : (
          // A conversation belongs to one app and one caller: changing either starts a new one.
          <ChatPanel key={`${slug.trim()}\n${apiKey.trim()}`} slug={slug} apiKey={apiKey} />
        )}
      </div>
    </PageContainer>
  );
}

/** In place of the panel of an endpoint the chosen app does not answer. */
function NotThisEndpoint({ name, answers }: { name: string; answers: "chat" | "completion" }) {
  return (
    <EmptyState
      icon={MessagesSquare}
      title={answers === "chat" ? "A chat application" : "A completion application"}
      description={
        answers === "chat"
          ? `${name} answers chat messages: use Test Chat.`
          : `${name} answers completions, not chat: use Test Completion.`
      }
    />
  );
}
