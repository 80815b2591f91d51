import { Building2, Menu, X } from "lucide-react";
import { lazy, Suspense, useState, useSyncExternalStore } from "react";
import { useAuth } from "react-oidc-context";
import { NavLink } from "react-router";
import { useActingAccountCheck } from "../../components/organizations/use-acting-account-check";
import { ButtonLink } from "../../components/ui/button";
import { BrandLink } from "../../components/ui/logo";
import { Spinner } from "../../components/ui/spinner";
import { useSignOut } from "../../features/auth/use-sign-out";
import { useActingOrganization } from "../../lib/acting-account";
import { useSellsApps } from "../../lib/applications-query";
import { cn } from "../../lib/cn";
import { useIsOperator } from "../../lib/operator-query";
import { describeSession, useProfile } from "../../lib/profile-query";
import { MobileMenu } from "./mobile-menu";
import { accountNavItemsFor, EXPLORE_NAV_ITEM, navItemsFor } from "./nav-items";
import { UserAvatar } from "./user-avatar";

const MOBILE_MENU_ID = "mobile-menu";

// The menu (Radix dropdown) is only for signed-in people: it stays out of the public pages' first load.
const UserMenu = lazy(() => import("./user-menu").then((module) => ({ default: module.UserMenu })));
const AccountSwitcher = lazy(() =>
  import("../../components/organizations/account-switcher").then((module) => ({
    default: module.AccountSwitcher,
  })),
);

/** Tailwind's `lg` breakpoint, where the bar has room for every item and the user menu instead of the menu button. */
const WIDE_QUERY = "(min-width: 64rem)";

function subscribeToWidth(onChange: () => void) {
  const query = window.matchMedia?.(WIDE_QUERY);
  query?.addEventListener("change", onChange);
  return () => query?.removeEventListener("change", onChange);
}

/** Whether the bar is wide enough for the user menu (always, where matchMedia is missing). */
function useWideBar(): boolean {
  return useSyncExternalStore(
    subscribeToWidth,
    () => window.matchMedia?.(WIDE_QUERY).matches ?? true,
    // The prerendered shells (src/shell.tsx) have no signed-in user, hence no menu.
    () => false,
  );
}

const linkClasses = ({ isActive }: { isActive: boolean }) =>
  cn(
    "rounded-md px-2.5 py-2 text-sm font-medium whitespace-nowrap transition-colors xl:px-3",
    isActive ? "bg-brand-50 text-brand-700" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
  );

export function Navbar() {
  const auth = useAuth();
  const profile = useProfile();
  const signOut = useSignOut();
  const [mobileOpen, setMobileOpen] = useState(false);
  // On a phone the menu is hidden (the menu button replaces it): its code is not even loaded.
  const wide = useWideBar();
  const signedIn = auth.isAuthenticated;
  const operator = useIsOperator();
  const acting = useActingOrganization();
  useActingAccountCheck(signedIn);
  const role = signedIn ? (acting?.role ?? null) : null;
  // An organization can always sell (it has a creator record); a person once their profile says so.
  const sells = useSellsApps(signedIn && (acting !== null || Boolean(profile.data?.creator)));
  const navItems = navItemsFor({ creator: sells, operator, role });
  const identity = describeSession(profile.data, auth.user);
  const startSignOut = () => void signOut();

  return (
    <header className="sticky top-0 z-40 border-b border-slate-200 bg-white/85 backdrop-blur supports-[backdrop-filter]:bg-white/70">
      <nav aria-label="Main" className="mx-auto max-w-7xl">
        <div className="flex h-16 items-center gap-2 px-4 sm:gap-6 sm:px-6 lg:px-8">
          <BrandLink />

          {signedIn ? (
            <ul className="hidden items-center gap-1 lg:flex">
              {navItems.map(({ to, label, end }) => (
                <li key={to}>
                  <NavLink to={to} end={end} className={linkClasses}>
                    {label}
                  </NavLink>
                </li>
              ))}
            </ul>
          ) : (
            // Signed out there is no mobile menu, so Explore stays in the bar at every width.
            <NavLink to={EXPLORE_NAV_ITEM.to} className={linkClasses}>
              {EXPLORE_NAV_ITEM.label}
            </NavLink>
          )}

          <div className="ml-auto flex items-center gap-2">
            {signedIn ? (
              <>
                <div className="hidden items-center gap-2 lg:flex">
                  {wide && (
                    <Suspense fallback={<UserAvatar initial={identity.initial} />}>
                      <AccountSwitcher />
                      <UserMenu identity={identity} role={role} onSignOut={startSignOut} />
                    </Suspense>
                  )}
                </div>
                {acting && (
                  // On a phone the bar still says an organization acts; the menu says which role and switches.
                  <span className="flex max-w-40 items-center gap-1.5 rounded-md bg-brand-50 px-2 py-1 text-xs font-medium text-brand-700 lg:hidden">
                    <Building2 className="size-3.5 shrink-0" aria-hidden="true" />
                    <span className="truncate">
                      <span className="sr-only">Acting as </span>
                      {acting.name}
                    </span>
                  </span>
                )}
                <button
                  type="button"
                  className="inline-flex size-10 items-center justify-center rounded-lg text-slate-600 hover:bg-slate-100 hover:text-slate-900 lg:hidden"
                  aria-label={mobileOpen ? "Close menu" : "Open menu"}
                  aria-expanded={mobileOpen}
                  aria-controls={MOBILE_MENU_ID}
                  onClick={() => setMobileOpen((open) => !open)}
                >
                  {mobileOpen ? (
                    <X className="size-5" aria-hidden="true" />
                  ) : (
                    <Menu className="size-5" aria-hidden="true" />
                  )}
                </button>
              </>
            ) : auth.isLoading ? (
              <span role="status" className="flex items-center text-slate-400">
                <Spinner />
                <span className="sr-only">Loading</span>
              </span>
            ) : (
              <>
                <ButtonLink to="/login" variant="ghost" size="sm">
                  Sign in
                </ButtonLink>
                <ButtonLink to="/register" size="sm">
                  Get Started
                </ButtonLink>
              </>
            )}
          </div>
        </div>

        {signedIn && mobileOpen && (
          <MobileMenu
            id={MOBILE_MENU_ID}
            items={navItems}
            accountItems={accountNavItemsFor(role)}
            identity={identity}
            onNavigate={() => setMobileOpen(false)}
            onSignOut={startSignOut}
          />
        )}
      </nav>
    </header>
  );
}
