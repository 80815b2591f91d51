import {
  BarChart3,
  Compass,
  FlaskConical,
  LayoutDashboard,
  type LucideIcon,
  Package,
  PiggyBank,
  Repeat,
  ShieldCheck,
  Wallet,
} from "lucide-react";

export interface NavItem {
  to: string;
  label: string;
  icon: LucideIcon;
  /** Active only on this exact path, not on the paths below it. */
  end?: boolean;
  /** Shown only to creators. */
  creatorOnly?: boolean;
}

/** The public app catalogue: in the bar signed out and signed in. */
export const EXPLORE_NAV_ITEM: NavItem = { to: "/explore", label: "Explore", icon: Compass };

/**
 * The signed-in navigation of SPEC §2 plus Explore, the Wallet and My subscriptions (what someone
 * who only calls apps needs), shared by the bar and the mobile menu.
 */
export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/dashboard", label: "Dashboard", icon: LayoutDashboard, end: true },
  { to: "/applications", label: "Applications", icon: Package },
  { to: "/analytics", label: "Analytics", icon: BarChart3 },
  { to: "/earnings", label: "Earnings", icon: PiggyBank, creatorOnly: true },
  { to: "/api-test", label: "API Test", icon: FlaskConical },
  EXPLORE_NAV_ITEM,
  { to: "/wallet", label: "Wallet", icon: Wallet },
  { to: "/subscriptions", label: "Subscriptions", icon: Repeat },
];

/** Only for the platform's operators (the operator role, verified address): the server says who they are. */
export const ADMIN_NAV_ITEM: NavItem = { to: "/admin", label: "Admin", icon: ShieldCheck };

/** The items a person sees: creators also get their Earnings, operators the Admin page. */
export function navItemsFor(who: { creator: boolean; operator: boolean }): readonly NavItem[] {
  const items = NAV_ITEMS.filter((item) => who.creator || !item.creatorOnly);
  return who.operator ? [...items, ADMIN_NAV_ITEM] : items;
}
