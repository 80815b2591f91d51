import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { useSearchParams } from "react-router";
import { Alert } from "../../components/ui/alert";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { useAppMode } from "./api/get-app-mode";
import { ChatPanel } from "./chat-panel";
import { CompletionPanel } from "./completion-panel";
import { TestTargetCard } from "./test-target-card";

/** /api-test, public; `?app={slug}` preselects an application. */
export function ApiTestPage() {
  const { isAuthenticated } = useAuth();
  const [searchParams] = useSearchParams();
  const [slug, setSlug] = useState(() => searchParams.get("app") ?? "");
  const [apiKey, setApiKey] = useState("");
  // Offer only what the app answers: completion-messages answers every app (a chat app one turn,
  // decision 031), chat-messages only chat and workflow apps, so a completion app has no Test Chat.
  const offersChat = useAppMode(slug, apiKey) !== "completion";

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
      <div className={offersChat ? "mt-6 grid gap-6 lg:grid-cols-2" : "mt-6"}>
        <CompletionPanel slug={slug} apiKey={apiKey} />
        {/* A conversation belongs to one app and one caller: changing either starts a new one. */}
        {offersChat && <ChatPanel key={`${slug.trim()}\n${apiKey.trim()}`} slug={slug} apiKey={apiKey} />}
      </div>
    </PageContainer>
  );
}
