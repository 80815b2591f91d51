import type { Application, AppPackageType } from "@promptmint/contracts";
import { useCallback, useState } from "react";
import { toast } from "sonner";
import { apiDownload } from "./api-client";

/** SPEC §8: what the person sees when the package could not be downloaded. */
export const DOWNLOAD_FAILED_MESSAGE = "Failed to download app. Please try again.";

/** SPEC §7: chat for prompt apps in chat mode, completion for everything else. */
export function appPackageTypeOf(app: Pick<Application, "type" | "interaction_mode">): AppPackageType {
  return app.type === "prompt" && app.interaction_mode === "chat" ? "chat" : "completion";
}

/** SPEC §7: `{slug}-{type}-app.zip`. */
export function appPackageFileName(slug: string, type: AppPackageType): string {
  return `${slug}-${type}-app.zip`;
}

/** `GET /app/{slug}/download-frontend?type=...`: the generated front-end app as a zip. */
export async function fetchAppPackage(
  slug: string,
  type: AppPackageType,
): Promise<{ blob: Blob; fileName: string }> {
  const { blob, fileName } = await apiDownload(
    `/app/${encodeURIComponent(slug)}/download-frontend?type=${type}`,
  );
  return { blob, fileName: fileName ?? appPackageFileName(slug, type) };
}

/** Saves a downloaded file under the given name. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked on the next tick: some browsers start the download asynchronously.
  window.setTimeout(() => URL.revokeObjectURL(url), 0);
}

/**
 * Downloads an application's front-end package and saves it under the server's file name. Tracks
 * which slug is busy, so a list can show 'Downloading...' on the right row; failures are logged and
 * shown as a toast with SPEC §8's text.
 */
export function useDownloadApp() {
  const [downloadingSlug, setDownloadingSlug] = useState<string | null>(null);

  const download = useCallback(async (app: Pick<Application, "slug" | "type" | "interaction_mode">) => {
    const type = appPackageTypeOf(app);
    setDownloadingSlug(app.slug);
    try {
      const { blob, fileName } = await fetchAppPackage(app.slug, type);
      saveBlob(blob, fileName);
    } catch (error) {
      console.warn(`[download] ${app.slug} failed`, error);
      toast.error(DOWNLOAD_FAILED_MESSAGE);
    } finally {
      setDownloadingSlug(null);
    }
  }, []);

  return { download, downloadingSlug };
}
