import type { Usage } from "@promptmint/contracts";
import { MessageSquarePlus, Send } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { TextareaField } from "../../components/ui/textarea-field";
import { AnswerText, UsageSummary } from "../../components/ui/usage-summary";
import { getErrorMessage } from "../../lib/api-client";
import { useTestChat } from "./api/send-chat-message";

interface ChatTurn {
  id: string;
  query: string;
  answer: string;
  usage: Usage;
}

/** Chat with an app; follow-ups continue the conversation until 'New conversation'. */
export function ChatPanel({ slug, apiKey }: { slug: string; apiKey: string }) {
  const chat = useTestChat();
  const [query, setQuery] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [conversationId, setConversationId] = useState<string | undefined>();
  const [turns, setTurns] = useState<ChatTurn[]>([]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (slug.trim() === "" || query.trim() === "") {
      setProblem("Please provide app slug and chat query");
      return;
    }
    setProblem(null);
    chat.mutate(
      { slug: slug.trim(), query, conversationId, apiKey: apiKey.trim() || undefined },
      {
        onSuccess: (response) => {
          setConversationId(response.conversation_id ?? conversationId);
          setTurns((current) => [
            ...current,
            { id: response.id, query, answer: response.answer, usage: response.metadata.usage },
          ]);
          setQuery("");
        },
      },
    );
  };

  const startOver = () => {
    chat.reset();
    setConversationId(undefined);
    setTurns([]);
  };

  return (
    <Card className="flex flex-col">
      <CardHeader
        title="Test Chat"
        description="A multi-turn conversation (chat-messages)."
        actions={
          turns.length > 0 && (
            <Button variant="ghost" size="sm" onClick={startOver} disabled={chat.isPending}>
              <MessageSquarePlus className="size-4" aria-hidden="true" />
              New conversation
            </Button>
          )
        }
      />
      <CardBody className="flex-1 space-y-4">
        {turns.length > 0 && (
          <section aria-label="Conversation" className="space-y-4">
            {conversationId && (
              <p className="text-xs text-slate-500">
                Conversation <span className="font-mono break-all">{conversationId}</span>
              </p>
            )}
            <ol className="space-y-4">
              {turns.map((turn, index) => (
                <li key={turn.id} aria-label={`Turn ${index + 1}`} className="space-y-2">
                  <div className="ml-auto w-fit max-w-[90%] rounded-lg bg-brand-600 px-3 py-2 text-sm whitespace-pre-wrap text-white">
                    <span className="sr-only">You: </span>
                    {turn.query}
                  </div>
                  <AnswerText answer={turn.answer} />
                  <UsageSummary usage={turn.usage} />
                </li>
              ))}
            </ol>
          </section>
        )}
        <form onSubmit={submit} noValidate className="space-y-3">
          <TextareaField
            label="Query"
            rows={3}
            placeholder="Ask something..."
            value={query}
            onChange={(event) => setQuery(event.target.value)}
          />
          <Button type="submit" busy={chat.isPending} disabled={query.trim() === ""}>
            {!chat.isPending && <Send className="size-4" aria-hidden="true" />}
            {chat.isPending ? "Sending..." : "Test Chat"}
          </Button>
        </form>
        {problem && <Alert tone="error">{problem}</Alert>}
        {chat.isError && <Alert tone="error">{`Chat test failed: ${getErrorMessage(chat.error)}`}</Alert>}
      </CardBody>
    </Card>
  );
}
