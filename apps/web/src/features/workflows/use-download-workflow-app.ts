import { useCallback, useState } from "react";
import { toast } from "sonner";
import { DOWNLOAD_FAILED_MESSAGE, fetchAppPackage, saveBlob } from "../../lib/download-app";

/** SPEC §7: workflow apps get the completion package, saved under the editor's own name. */
export function workflowPackageFileName(slug: string): string {
  return `${slug}-workflow-app.zip`;
}

/** Downloads a workflow app's front-end package; a failure is logged and shown as a toast. */
export function useDownloadWorkflowApp(slug: string) {
  const [downloading, setDownloading] = useState(false);

  const download = useCallback(async () => {
    setDownloading(true);
    try {
      saveBlob(await fetchAppPackage(slug, "completion"), workflowPackageFileName(slug));
    } catch (error) {
      console.warn(`[download] ${slug} failed`, error);
      toast.error(DOWNLOAD_FAILED_MESSAGE);
    } finally {
      setDownloading(false);
    }
  }, [slug]);

  return { download, downloading };
}
