import { Download } from "lucide-react";
import type { ButtonSize, ButtonVariant } from "./button";
import { Button } from "./button";

/** 'Download App' / 'Downloading...' (SPEC §2); the caller runs the download (lib/download-app). */
export function DownloadAppButton({
  busy,
  onClick,
  label = "Download App",
  variant = "secondary",
  size = "sm",
}: {
  busy: boolean;
  onClick: () => void;
  label?: string;
  variant?: ButtonVariant;
  size?: ButtonSize;
}) {
  return (
    <Button variant={variant} size={size} busy={busy} onClick={onClick}>
      {!busy && <Download className="size-4" aria-hidden="true" />}
      {busy ? "Downloading..." : label}
    </Button>
  );
}
