import { Play } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextareaField } from "../../components/ui/textarea-field";
import { AnswerText, UsageSummary } from "../../components/ui/usage-summary";
import { getErrorMessage } from "../../lib/api-client";
import { useTestCompletion } from "./api/send-completion-message";

export function CompletionPanel({ slug, apiKey }: { slug: string; apiKey: string }) {
  const completion = useTestCompletion();
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (slug.trim() === "" || text.trim() === "") {
      setProblem("Please provide app slug and input");
      return;
    }
    setProblem(null);
    completion.mutate({ slug: slug.trim(), text, apiKey: apiKey.trim() || undefined });
  };

  return (
    <Card className="flex flex-col">
      <CardHeader title="Test Completion" description="One input, one answer (completion-messages)." />
      <CardBody className="flex-1 space-y-4">
        <form onSubmit={submit} noValidate className="space-y-3">
          <TextareaField
            label="Input"
            rows={3}
            placeholder="Enter the text to send..."
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
          <Button type="submit" busy={completion.isPending} disabled={text.trim() === ""}>
            {!completion.isPending && <Play className="size-4" aria-hidden="true" />}
            {completion.isPending ? "Testing..." : "Test Completion"}
          </Button>
        </form>
        {problem && <Alert tone="error">{problem}</Alert>}
        {completion.isError && (
          <Alert tone="error">{`Completion test failed: ${getErrorMessage(completion.error)}`}</Alert>
        )}
        {completion.isSuccess && (
          <section aria-label="Completion result" className="space-y-3">
            <h3 className="text-sm font-semibold text-slate-900">Answer</h3>
            <AnswerText answer={completion.data.answer} />
            <UsageSummary usage={completion.data.metadata.usage} />
          </section>
        )}
      </CardBody>
    </Card>
  );
}
