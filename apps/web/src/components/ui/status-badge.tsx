import { Badge, type BadgeTone } from "./badge";

/** SPEC §2: live green, draft yellow, any other status grey. */
export function statusToneOf(status: string): BadgeTone {
  if (status === "live") return "green";
  if (status === "draft") return "yellow";
  return "gray";
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge tone={statusToneOf(status)} className="capitalize">
      {status}
    </Badge>
  );
}
