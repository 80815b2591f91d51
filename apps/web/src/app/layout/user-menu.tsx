import * as DropdownMenu from "@radix-ui/react-dropdown-menu";
import { BarChart3, KeyRound, LogOut, UserRound, Wallet, Webhook } from "lucide-react";
import { Link } from "react-router";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import type { SessionIdentity } from "../../lib/profile-query";
import { UserAvatar } from "./user-avatar";

const MENU_LINKS = [
  { to: "/profile", label: "Profile", icon: UserRound },
  { to: "/api-keys", label: "API Keys", icon: KeyRound },
  { to: "/webhooks", label: "Webhooks", icon: Webhook },
  { to: "/wallet", label: "Wallet", icon: Wallet },
  { to: "/analytics", label: "Analytics", icon: BarChart3 },
];

const itemClasses =
  "flex cursor-pointer select-none items-center gap-2.5 rounded-md px-2.5 py-2 text-sm text-slate-700 outline-none " +
  "data-[highlighted]:bg-slate-100 data-[highlighted]:text-slate-900";

/** The avatar button with Profile, API Keys, Webhooks, Wallet, Analytics, API reference and Sign out (keyboard: Enter/Space, arrows, Esc). */
export function UserMenu({ identity, onSignOut }: { identity: SessionIdentity; onSignOut: () => void }) {
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
          {MENU_LINKS.map(({ to, label, icon: Icon }) => (
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
