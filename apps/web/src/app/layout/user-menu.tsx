import type { OrganizationRole } from "@promptmint/contracts";
import * as DropdownMenu from "@radix-ui/react-dropdown-menu";
import { BarChart3, LogOut, Wallet } from "lucide-react";
import { Link } from "react-router";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { accountMay } from "../../lib/organization-capabilities";
import type { SessionIdentity } from "../../lib/profile-query";
import { accountNavItemsFor, type NavItem } from "./nav-items";
import { UserAvatar } from "./user-avatar";

const MONEY_AND_FIGURES: readonly NavItem[] = [
  { to: "/wallet", label: "Wallet", icon: Wallet, capability: "read_billing" },
  { to: "/analytics", label: "Analytics", icon: BarChart3, capability: "read" },
];

/** The menu's links the acting account's role may use (all of them for a person's own account). */
function menuLinksFor(role: OrganizationRole | null): readonly NavItem[] {
  return [
    ...accountNavItemsFor(role),
    ...MONEY_AND_FIGURES.filter((item) => !item.capability || accountMay(role, item.capability)),
  ];
}

const itemClasses =
  "flex cursor-pointer select-none items-center gap-2.5 rounded-md px-2.5 py-2 text-sm text-slate-700 outline-none " +
  "data-[highlighted]:bg-slate-100 data-[highlighted]:text-slate-900";

/** The avatar button with Profile, API Keys, Webhooks, Wallet, Analytics, API reference and Sign out (keyboard: Enter/Space, arrows, Esc). */
export function UserMenu({
  identity,
  role = null,
  onSignOut,
}: {
  identity: SessionIdentity;
  /** The member's role when acting for an organization. */
  role?: OrganizationRole | null;
  onSignOut: () => void;
}) {
  return (
    <DropdownMenu.Root modal={false}>
      <DropdownMenu.Trigger
        aria-label="User menu"
        className="rounded-full ring-offset-2 transition hover:ring-2 hover:ring-brand-200 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600"
      >
        <UserAvatar initial={identity.initial} />
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={8}
          className="z-50 w-64 rounded-xl border border-slate-200 bg-white p-1.5 shadow-lg shadow-slate-900/10"
        >
          <DropdownMenu.Label className="px-2.5 py-2">
            <p className="truncate text-sm font-medium text-slate-900">{identity.name}</p>
            {identity.email && <p className="truncate text-xs text-slate-500">{identity.email}</p>}
          </DropdownMenu.Label>
          <DropdownMenu.Separator className="my-1 h-px bg-slate-100" />
          {menuLinksFor(role).map(({ to, label, icon: Icon }) => (
            <DropdownMenu.Item key={to} asChild className={itemClasses}>
              <Link to={to}>
                <Icon className="size-4 text-slate-400" aria-hidden="true" />
                {label}
              </Link>
            </DropdownMenu.Item>
          ))}
          <DropdownMenu.Item asChild className={itemClasses}>
            <ApiReferenceLink look="plain" className="[&>svg]:text-slate-400" />
          </DropdownMenu.Item>
          <DropdownMenu.Separator className="my-1 h-px bg-slate-100" />
          <DropdownMenu.Item className={itemClasses} onSelect={onSignOut}>
            <LogOut className="size-4 text-slate-400" aria-hidden="true" />
            Sign out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
