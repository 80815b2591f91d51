import { Building2, Check, Plus, Settings, UserRound } from "lucide-react";
import { Link } from "react-router";
import { useActingOrganization, useSwitchAccount } from "../../lib/acting-account";
import { cn } from "../../lib/cn";
import { useOrganizations } from "../../lib/organizations-query";
import { actingAccountText } from "./acting-account-text";
import { RoleBadge } from "./role-badge";

const choiceClasses = (chosen: boolean) =>
  cn(
    "flex w-full items-center gap-3 rounded-lg px-3 py-2.5 text-left text-sm font-medium transition-colors",
    chosen ? "bg-brand-50 text-brand-700" : "text-slate-700 hover:bg-slate-100 hover:text-slate-900",
  );

/** The mobile menu's accounts: which one acts, the others to switch to, create and manage. */
export function AccountChoices({ onNavigate }: { onNavigate: () => void }) {
  const acting = useActingOrganization();
  const organizations = useOrganizations();
  const switchAccount = useSwitchAccount();

  return (
    <section aria-labelledby="account-choices-title" className="mb-3 border-b border-slate-100 pb-3">
      <h2 id="account-choices-title" className="px-3 pb-1 text-xs font-medium text-slate-500">
        Acting as <span className="text-slate-900">{actingAccountText(acting)}</span>
      </h2>
      <ul className="space-y-1">
        <li>
          <button
            type="button"
            aria-pressed={acting === null}
            className={choiceClasses(acting === null)}
            onClick={() => {
              switchAccount(null);
              onNavigate();
            }}
          >
            <UserRound className="size-4" aria-hidden="true" />
            <span className="flex-1">Personal</span>
            {acting === null && <Check className="size-4" aria-hidden="true" />}
          </button>
        </li>
        {organizations.data?.map((organization) => {
          const chosen = acting?.id === organization.id;
          return (
            <li key={organization.id}>
              <button
                type="button"
                aria-pressed={chosen}
                className={choiceClasses(chosen)}
                onClick={() => {
                  switchAccount({ id: organization.id, name: organization.name, role: organization.role });
                  onNavigate();
                }}
              >
                <Building2 className="size-4" aria-hidden="true" />
                <span className="min-w-0 flex-1 truncate">{organization.name}</span>
                <RoleBadge role={organization.role} />
                {chosen && <Check className="size-4" aria-hidden="true" />}
              </button>
            </li>
          );
        })}
        {organizations.isPending && (
          <li className="px-3 py-2 text-sm text-slate-500">Loading organizations…</li>
        )}
        {organizations.isError && (
          <li role="alert" className="px-3 py-2 text-sm text-red-700">
            Your organizations could not be loaded.
          </li>
        )}
        <li>
          <Link to="/organizations#create" className={choiceClasses(false)} onClick={onNavigate}>
            <Plus className="size-4" aria-hidden="true" />
            Create organization
          </Link>
        </li>
        {acting && (
          <li>
            <Link
              to={`/organizations/${encodeURIComponent(acting.id)}`}
              className={choiceClasses(false)}
              onClick={onNavigate}
            >
              <Settings className="size-4" aria-hidden="true" />
              Manage organization
            </Link>
          </li>
        )}
      </ul>
    </section>
  );
}
