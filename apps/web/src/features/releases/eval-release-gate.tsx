import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Card, CardBody } from "../../components/ui/card";
import { SwitchField } from "../../components/ui/switch-field";
import { getErrorMessage } from "../../lib/api-client";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useEvalSettings } from "./api/evals";

export function ReleaseGate({ app, required }: { app: ReleaseAppId; required: boolean }) {
  const settings = useEvalSettings(app);
  return (
    <Card>
      <CardBody className="space-y-3">
        <SwitchField
          label="Require a passing eval run before production"
          description="When on, a version moves to production (a release, a save with promote, a rollback to another version) only after a run of it passed every case."
          checked={settings.isPending ? !required : required}
          disabled={settings.isPending}
          onChange={(checked) =>
            settings.mutate(checked, {
              onSuccess: () =>
                toast.success(checked ? "Production now needs a passing run" : "Release gate off"),
            })
          }
        />
        {settings.isError && <Alert tone="error">{getErrorMessage(settings.error)}</Alert>}
      </CardBody>
    </Card>
  );
}

// ---------------------------------------------------------------------------------------------
// Cases
