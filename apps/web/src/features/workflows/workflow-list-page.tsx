import { Workflow } from "lucide-react";
import { ApplicationListPage } from "../../components/ui/application-list-page";
import { WorkflowCard } from "./workflow-card";

/** /workflows */
export function WorkflowListPage() {
  return (
    <ApplicationListPage
      type="workflow"
      title="Workflow Applications"
      description="External workflows (Dify, n8n, Flowise, any webhook) you sell as APIs."
      createLabel="Create New Workflow"
      plural="workflows"
      noMatch="No workflows match these filters."
      empty={{
        icon: Workflow,
        title: "No workflows",
        description: "Get started by creating your first workflow application.",
      }}
      listLabel="Workflows"
      card={(app) => <WorkflowCard application={app} />}
    />
  );
}
