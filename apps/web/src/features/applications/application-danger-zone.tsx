import type { Application } from "@promptmint/contracts";
import { Trash2 } from "lucide-react";
import { useState } from "react";
import { useNavigate } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { getErrorMessage } from "../../lib/api-client";
import { useDeleteApplication } from "./api/delete-application";

/** SPEC §5: the confirmation every delete needs. */
export const DELETE_CONFIRMATION =
  "Are you sure you want to delete this application? This action cannot be undone.";

export function ApplicationDangerZone({ application }: { application: Application }) {
  const navigate = useNavigate();
  const remove = useDeleteApplication();
  const [confirming, setConfirming] = useState(false);

  const confirmDelete = () =>
    remove.mutate(application.slug, {
      onSuccess: () => {
        setConfirming(false);
        toast.success(`Deleted ${application.name}`);
        void navigate("/applications");
      },
    });

  return (
    <Card className="border-red-200">
      <CardHeader
        title="Danger Zone"
        description="Deleting an application removes its endpoint for everyone."
      />
      <CardBody>
        <Button
          variant="danger"
          size="sm"
          onClick={() => {
            remove.reset();
            setConfirming(true);
          }}
        >
          <Trash2 className="size-4" aria-hidden="true" />
          Delete Application
        </Button>
      </CardBody>
      <ConfirmDialog
        open={confirming}
        onOpenChange={setConfirming}
        title="Delete Application"
        description={DELETE_CONFIRMATION}
        confirmLabel="Delete"
        busyLabel="Deleting..."
        busy={remove.isPending}
        onConfirm={confirmDelete}
      >
        {remove.isError && (
          <Alert tone="error" className="mt-4">
            {getErrorMessage(remove.error)}
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}
