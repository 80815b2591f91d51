import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CopyButton } from "../../components/ui/copy-button";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../../components/ui/tabs";
import { API_KEY_PLACEHOLDER, type AppCallTarget, codeSamplesOf } from "../../lib/code-samples";

/** The app's call in five clients, each with a copy button. */
export function CodeSamplesCard({ target }: { target: AppCallTarget }) {
  const samples = codeSamplesOf(target);
  return (
    <Card>
      <CardHeader
        title="Call it from your code"
        description={
          <>
            Replace <code className="font-mono text-slate-700">{API_KEY_PLACEHOLDER}</code> with a key from{" "}
            <a href="/api-keys" className="font-medium text-brand-600 hover:text-brand-700">
              API Keys
            </a>
            . Every endpoint is described in the <ApiReferenceLink look="text" />.
          </>
        }
      />
      <CardBody>
        <Tabs defaultValue={samples[0]?.id}>
          <TabsList aria-label="Code samples" className="mb-4">
            {samples.map((sample) => (
              <TabsTrigger key={sample.id} value={sample.id}>
                {sample.label}
              </TabsTrigger>
            ))}
          </TabsList>
          {samples.map((sample) => (
            <TabsContent key={sample.id} value={sample.id} className="space-y-2">
              <div className="flex justify-end">
                <CopyButton text={sample.code} label={`Copy ${sample.label}`} />
              </div>
              <pre className="overflow-x-auto rounded-lg bg-slate-900 p-4 font-mono text-xs leading-relaxed text-slate-100">
                <code>{sample.code}</code>
              </pre>
            </TabsContent>
          ))}
        </Tabs>
      </CardBody>
    </Card>
  );
}
