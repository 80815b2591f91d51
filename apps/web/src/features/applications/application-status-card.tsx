import type { Application } from "@promptmint/contracts";
import { Check } from "lucide-react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { LinkedMessage } from "../../components/ui/linked-message";
import { StatusBadge } from "../../components/ui/status-badge";
import { getErrorMessage } from "../../lib/api-client";
import { useUpdateApplicationStatus } from "./api/update-application-status";
import { STATUS_ACTIONS } from "./application-options";

/** SPEC §4: any status may be set from any other; the current one's button is disabled. */
export function ApplicationStatusCard({ application }: { application: Application }) {
  const update = useUpdateApplicationStatus(application.slug);

  return (
    <Card>
      <CardHeader
        title="Status Management"
        description={
          <span className="inline-flex items-center gap-2">
            Current status: <StatusBadge status={application.status} />
          </span>
        }
      />
      <CardBody className="space-y-4">
        {update.isError && (
          <Alert tone="error">
            <LinkedMessage text={getErrorMessage(update.error)} />
          </Alert>
        )}
        <div className="flex flex-wrap gap-2">
          {STATUS_ACTIONS.map(({ status, label }) => {
            // The current status reads as a state (a check, no colour), not as a faded action.
            const current = application.status === status;
            return (
              <Button
                key={status}
                variant={status === "live" && !current ? "primary" : "secondary"}
                size="sm"
                disabled={current || update.isPending}
                aria-current={current ? "true" : undefined}
                busy={update.isPending && update.variables === status}
                onClick={() => update.mutate(status)}
              >
                {current && <Check className="size-4" aria-hidden="true" />}
                {label}
              </Button>
            );
          })}
        </div>
      </CardBody>
    </Card>
  );
}
