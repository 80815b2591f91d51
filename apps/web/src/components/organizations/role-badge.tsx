import type { OrganizationRole } from "@promptmint/contracts";
import { Badge, type BadgeTone } from "../ui/badge";

const TONES: Record<OrganizationRole, BadgeTone> = {
  owner: "brand",
  admin: "blue",
  developer: "green",
  billing: "yellow",
  viewer: "gray",
};

/** A member's role in an organization, as a small label. */
export function RoleBadge({ role, className }: { role: OrganizationRole; className?: string }) {
  return (
    <Badge tone={TONES[role]} className={className}>
      {role}
    </Badge>
  );
}
