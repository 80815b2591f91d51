import type { OrganizationRole } from "@promptmint/contracts";
import {
  BarChart3,
  Compass,
  FlaskConical,
  KeyRound,
  LayoutDashboard,
  type LucideIcon,
  Package,
  PiggyBank,
  Repeat,
  ShieldCheck,
  UserRound,
  Wallet,
  Webhook,
} from "lucide-react";
import { accountMay, type Capability } from "../../lib/organization-capabilities";

export interface NavItem {
  to: string;
  label: string;
  icon: LucideIcon;
  /** Active only on this exact path, not on the paths below it. */
  end?: boolean;
  /** Shown only to creators. */
  creatorOnly?: boolean;
  /** What a member's role must allow for the item to show when acting for an organization. */
  capability?: Capability;
}

/** The public app catalogue: in the bar signed out and signed in. */
export const EXPLORE_NAV_ITEM: NavItem = { to: "/explore", label: "Explore", icon: Compass };

/**
 * The signed-in navigation of SPEC §2 plus Explore, the Wallet and My subscriptions (what someone
 * who only calls apps needs), shared by the bar and the mobile menu.
 */
export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/dashboard", label: "Dashboard", icon: LayoutDashboard, end: true, capability: "read" },
  { to: "/applications", label: "Applications", icon: Package, capability: "read" },
  { to: "/analytics", label: "Analytics", icon: BarChart3, capability: "read" },
  { to: "/earnings", label: "Earnings", icon: PiggyBank, creatorOnly: true, capability: "read" },
  { to: "/api-test", label: "API Test", icon: FlaskConical, capability: "call" },
  EXPLORE_NAV_ITEM,
  { to: "/wallet", label: "Wallet", icon: Wallet, capability: "read_billing" },
  { to: "/subscriptions", label: "Subscriptions", icon: Repeat, capability: "read_billing" },
];

/** Only for the platform's operators (the operator role, verified address): the server says who they are. */
export const ADMIN_NAV_ITEM: NavItem = { to: "/admin", label: "Admin", icon: ShieldCheck };

/**
 * The items a person sees: creators also get their Earnings, operators the Admin page; acting for
 * an organization (`role`), only what their role may use.
 */
export function navItemsFor(who: {
  creator: boolean;
  operator: boolean;
  role?: OrganizationRole | null;
}): readonly NavItem[] {
  const items = NAV_ITEMS.filter((item) => who.creator || !item.creatorOnly).filter(
    (item) => !item.capability || accountMay(who.role ?? null, item.capability),
  );
  return who.operator ? [...items, ADMIN_NAV_ITEM] : items;
}

/** The account pages of the user menu and the mobile menu (the profile is always the person's own). */
export const ACCOUNT_NAV_ITEMS: readonly NavItem[] = [
  { to: "/profile", label: "Profile", icon: UserRound },
  { to: "/api-keys", label: "API Keys", icon: KeyRound, capability: "call" },
  { to: "/webhooks", label: "Webhooks", icon: Webhook, capability: "build" },
];

/** The account pages the acting account's role may use. */
export function accountNavItemsFor(role: OrganizationRole | null): readonly NavItem[] {
  return ACCOUNT_NAV_ITEMS.filter((item) => !item.capability || accountMay(role, item.capability));
}
