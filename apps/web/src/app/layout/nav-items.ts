import {
  BarChart3,
  Compass,
  FlaskConical,
  LayoutDashboard,
  type LucideIcon,
  Package,
  PiggyBank,
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

/** The signed-in navigation of SPEC §2 plus Explore, shared by the bar and the mobile menu. */
export const NAV_ITEMS: readonly NavItem[] = [
  { to: "/dashboard", label: "Dashboard", icon: LayoutDashboard, end: true },
  { to: "/applications", label: "Applications", icon: Package },
  { to: "/analytics", label: "Analytics", icon: BarChart3 },
  { to: "/earnings", label: "Earnings", icon: PiggyBank, creatorOnly: true },
  { to: "/api-test", label: "API Test", icon: FlaskConical },
  EXPLORE_NAV_ITEM,
];

/** The items a person sees: creators also get their Earnings. */
export function navItemsFor(isCreator: boolean): readonly NavItem[] {
  return NAV_ITEMS.filter((item) => isCreator || !item.creatorOnly);
}
