import type { Profile } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { Badge } from "../../components/ui/badge";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { formatDate, formatNumber } from "../../lib/format";

function Item({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-1 py-3 first:pt-0 last:pb-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{term}</dt>
      <dd className="text-sm text-slate-900">{children}</dd>
    </div>
  );
}

/** The side panel of Profile Settings; plan and credits only for creators (SPEC §6). */
export function AccountInformation({ profile: { user, creator } }: { profile: Profile }) {
  return (
    <Card>
      <CardHeader title="Account Information" />
      <CardBody>
        <dl className="divide-y divide-slate-100">
          <Item term="Account ID">
            <span className="break-all font-mono text-xs">{user.id}</span>
          </Item>
          <Item term="Member Since">{formatDate(user.date_joined, "N/A")}</Item>
          <Item term="Account Status">
            <Badge tone={user.is_active ? "green" : "gray"}>{user.is_active ? "Active" : "Inactive"}</Badge>
          </Item>
          {creator && (
            <>
              <Item term="Plan">
                <span className="capitalize">{creator.plan}</span>
              </Item>
              <Item term="Credits">{formatNumber(creator.credits)}</Item>
            </>
          )}
        </dl>
      </CardBody>
    </Card>
  );
}
