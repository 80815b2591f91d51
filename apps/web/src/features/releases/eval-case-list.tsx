import type { EvalCase, IoSchema } from "@promptmint/contracts";
import { FlaskConical, Plus, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { getErrorMessage } from "../../lib/api-client";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useDeleteEvalCase } from "./api/evals";
import { describeAssertion } from "./eval-assertions";
import { CaseEditor } from "./eval-case-editor";

export function CaseList({
  app,
  cases,
  maxCases,
  schema,
  chat,
}: {
  app: ReleaseAppId;
  cases: EvalCase[];
  maxCases: number;
  schema: IoSchema | null;
  chat: boolean;
}) {
  const [editing, setEditing] = useState<EvalCase | "new" | null>(null);
  const remove = useDeleteEvalCase(app);
  const full = cases.length >= maxCases;
  return (
    <Card>
      <CardHeader
        title="Test cases"
        description={`Inputs and what the answer must meet. A run runs every case (at most ${maxCases}).`}
        actions={
          editing === null && (
            <Button size="sm" onClick={() => setEditing("new")} disabled={full}>
              <Plus className="size-4" aria-hidden="true" /> Add case
            </Button>
          )
        }
      />
      {editing !== null && (
        <CardBody className="border-b border-slate-100 bg-slate-50/60">
          <CaseEditor
            key={editing === "new" ? "new" : editing.id}
            app={app}
            existing={editing === "new" ? null : editing}
            schema={schema}
            chat={chat}
            onDone={() => setEditing(null)}
          />
        </CardBody>
      )}
      {cases.length === 0 && editing === null ? (
        <EmptyState
          framed={false}
          icon={FlaskConical}
          title="No test cases yet"
          description="Add a case: the inputs of a call and what its answer must contain, match, cost at most, or meet by a rubric."
          action={
            <Button onClick={() => setEditing("new")}>
              <Plus className="size-4" aria-hidden="true" /> Add the first case
            </Button>
          }
        />
      ) : (
        <ul className="divide-y divide-slate-100" aria-label="Test cases">
          {cases.map((c) => (
            <li
              key={c.id}
              className="flex flex-col gap-2 px-5 py-4 sm:flex-row sm:items-start sm:justify-between"
            >
              <div className="min-w-0">
                <h3 className="text-sm font-semibold text-slate-900">{c.name}</h3>
                <p className="mt-0.5 truncate font-mono text-xs text-slate-500">{JSON.stringify(c.inputs)}</p>
                <ul className="mt-2 flex flex-wrap gap-1.5">
                  {c.assertions.map((a, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: assertions have no id of their own
                    <li key={i}>
                      <Badge tone="gray" className="max-w-xs truncate">
                        {describeAssertion(a)}
                      </Badge>
                    </li>
                  ))}
                  {c.assertions.length === 0 && (
                    <li className="text-xs text-slate-500">
                      No assertions: passes whenever the model answers.
                    </li>
                  )}
                </ul>
              </div>
              <div className="flex shrink-0 gap-2">
                <Button size="sm" variant="secondary" onClick={() => setEditing(c)}>
                  Edit
                </Button>
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`Delete ${c.name}`}
                  busy={remove.isPending && remove.variables === c.id}
                  onClick={() => remove.mutate(c.id, { onSuccess: () => toast.success("Case deleted") })}
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {remove.isError && (
        <CardBody>
          <Alert tone="error">{getErrorMessage(remove.error)}</Alert>
        </CardBody>
      )}
    </Card>
  );
}
