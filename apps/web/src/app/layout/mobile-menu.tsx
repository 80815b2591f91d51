import { LogOut } from "lucide-react";
import { NavLink } from "react-router";
import { AccountChoices } from "../../components/organizations/account-choices";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { cn } from "../../lib/cn";
import type { SessionIdentity } from "../../lib/profile-query";
import { ACCOUNT_NAV_ITEMS, NAV_ITEMS, type NavItem } from "./nav-items";
import { UserAvatar } from "./user-avatar";

const linkClasses = ({ isActive }: { isActive: boolean }) =>
  cn(
    "flex items-center gap-3 rounded-lg px-3 py-2.5 text-sm font-medium transition-colors",
    isActive ? "bg-brand-50 text-brand-700" : "text-slate-700 hover:bg-slate-100 hover:text-slate-900",
  );

/** The small-screen menu: the acting account, and the same destinations as the bar and the user menu. */
export function MobileMenu({
  id,
  items = NAV_ITEMS,
  accountItems = ACCOUNT_NAV_ITEMS,
  identity,
  onNavigate,
  onSignOut,
}: {
  id: string;
  /** The navigation items (NAV_ITEMS, with Admin for an operator). */
  items?: readonly NavItem[];
  /** Profile, API Keys, Webhooks: those the acting account's role may use. */
  accountItems?: readonly NavItem[];
  identity: SessionIdentity;
  onNavigate: () => void;
  onSignOut: () => void;
}) {
  return (
    <div id={id} className="border-t border-slate-200 bg-white px-4 pt-3 pb-4 shadow-sm lg:hidden">
      <AccountChoices onNavigate={onNavigate} />
      <ul className="space-y-1">
        {items.map(({ to, label, icon: Icon, end }) => (
          <li key={to}>
            <NavLink to={to} end={end} className={linkClasses} onClick={onNavigate}>
              <Icon className="size-4" aria-hidden="true" />
              {label}
            </NavLink>
          </li>
        ))}
      </ul>
      <div className="mt-3 border-t border-slate-100 pt-3">
        <div className="flex items-center gap-3 px-3 py-2">
          <UserAvatar initial={identity.initial} />
          <div className="min-w-0">
            <p className="truncate text-sm font-medium text-slate-900">{identity.name}</p>
            {identity.email && <p className="truncate text-xs text-slate-500">{identity.email}</p>}
          </div>
        </div>
        <ul className="mt-1 space-y-1">
          {accountItems.map(({ to, label, icon: Icon }) => (
            <li key={to}>
              <NavLink to={to} className={linkClasses} onClick={onNavigate}>
                <Icon className="size-4" aria-hidden="true" />
                {label}
              </NavLink>
            </li>
          ))}
          <li>
            <ApiReferenceLink
              look="plain"
              className={linkClasses({ isActive: false })}
              onClick={onNavigate}
            />
          </li>
          <li>
            <button
              type="button"
              className="flex w-full items-center gap-3 rounded-lg px-3 py-2.5 text-left text-sm font-medium text-slate-700 hover:bg-slate-100 hover:text-slate-900"
              onClick={() => {
                onNavigate();
                onSignOut();
              }}
            >
              <LogOut className="size-4" aria-hidden="true" />
              Sign out
            </button>
          </li>
        </ul>
      </div>
    </div>
  );
}
