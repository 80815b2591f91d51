import type { Profile } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { Badge } from "../../components/ui/badge";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { Money } from "../../components/ui/money";
import { formatDate } from "../../lib/format";
import { useWallet } from "../../lib/wallet-query";

function Item({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-1 py-3 first:pt-0 last:pb-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{term}</dt>
      <dd className="text-sm text-slate-900">{children}</dd>
    </div>
  );
}

/** Every creator starts on this plan, and nothing on the platform sells another yet. */
const DEFAULT_PLAN = "free";

/**
 * The side panel of Profile Settings. SPEC §6 gives creators Plan and Credits: a creator's credits
 * are their wallet (the creator record's own `credits` are not spent anywhere), so Credits shows
 * the wallet's balance, linked to it, and the free plan says what it means. Consumers see the same
 * balance as Wallet Balance.
 */
export function AccountInformation({ profile: { user, creator } }: { profile: Profile }) {
  const wallet = useWallet();
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
          <Item term={creator ? "Credits" : "Wallet Balance"}>
            <span className="flex items-baseline justify-between gap-2">
              <span className="tabular-nums">
                {wallet.data ? <Money micros={wallet.data.balance_micros} /> : "—"}
              </span>
              <Link to="/wallet" className="text-sm font-medium text-brand-700 hover:underline">
                Open wallet
              </Link>
            </span>
          </Item>
          {creator && (
            <Item term="Plan">
              {creator.plan === DEFAULT_PLAN ? (
                "Free — no monthly fee; the platform takes its fee per paid call"
              ) : (
                <span className="capitalize">{creator.plan}</span>
              )}
            </Item>
          )}
        </dl>
      </CardBody>
    </Card>
  );
}
