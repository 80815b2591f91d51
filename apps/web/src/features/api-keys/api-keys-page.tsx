import type { CreatedApiKey } from "@promptmint/contracts";
import { useState } from "react";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { ApiKeyList } from "./api-key-list";
import { CreateApiKeyForm } from "./create-api-key-form";
import { CreatedApiKeyPanel } from "./created-api-key-panel";

/** /api-keys: keys that call applications from code, as `Authorization: Bearer pm_...`. */
export function ApiKeysPage() {
  // Held only in memory: once dismissed or the page is left, the full key is gone for good.
  const [created, setCreated] = useState<CreatedApiKey | null>(null);

  return (
    <PageContainer className="max-w-5xl">
      <PageHeader
        title="API Keys"
        description="Call applications from your code or the API test console with a key instead of your session."
      />
      <div className="space-y-6">
        {created && <CreatedApiKeyPanel apiKey={created} onDismiss={() => setCreated(null)} />}
        <CreateApiKeyForm onCreated={setCreated} />
        <ApiKeyList />
      </div>
    </PageContainer>
  );
}
