import * as DropdownMenu from "@radix-ui/react-dropdown-menu";
import { Building2, Check, ChevronDown, Plus, Settings, UserRound } from "lucide-react";
import { useState } from "react";
import { Link } from "react-router";
import { useActingOrganization, useSwitchAccount } from "../../lib/acting-account";
import { useOrganizations } from "../../lib/organizations-query";
import { actingAccountText } from "./acting-account-text";
import { RoleBadge } from "./role-badge";

const PERSONAL = "personal";

const itemClasses =
  "flex cursor-pointer select-none items-center gap-2.5 rounded-md px-2.5 py-2 text-sm text-slate-700 outline-none " +
  "data-[highlighted]:bg-slate-100 data-[highlighted]:text-slate-900";

/**
 * The bar's account switcher (wide screens): which account acts, and a menu to act for yourself
 * or one of your organizations, create one or manage the one acted for. The list is read when the
 * menu opens (or at once when acting for an organization: the nav checks it still may).
 */
export function AccountSwitcher() {
  const acting = useActingOrganization();
  const [open, setOpen] = useState(false);
  const organizations = useOrganizations({ enabled: open || acting !== null });
  const switchAccount = useSwitchAccount();
  const text = actingAccountText(acting);

  const choose = (value: string) => {
    if (value === PERSONAL) return switchAccount(null);
    const organization = organizations.data?.find((candidate) => candidate.id === value);
    if (organization)
      switchAccount({ id: organization.id, name: organization.name, role: organization.role });
  };

  return (
    <DropdownMenu.Root modal={false} open={open} onOpenChange={setOpen}>
      <DropdownMenu.Trigger
        aria-label={`Acting as ${text}: switch account`}
        title={`Acting as ${text}`}
        // Between lg and xl the bar's items leave room for the icon only (the title says who acts).
        className="flex h-10 items-center gap-2 rounded-lg border border-slate-200 px-2.5 py-1 text-left xl:h-auto xl:max-w-60 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600"
      >
        {acting ? (
          <Building2 className="size-4 shrink-0 text-brand-600" aria-hidden="true" />
        ) : (
          <UserRound className="size-4 shrink-0 text-slate-400" aria-hidden="true" />
        )}
        <span className="hidden min-w-0 xl:block">
          <span className="block text-[11px] leading-4 text-slate-500">Acting as</span>
          {/* A long name is cut short, the role never: it says what the bar's items are for. */}
          <span className="flex min-w-0 text-sm leading-5 font-medium text-slate-900">
            <span className="truncate">{acting?.name ?? "Personal"}</span>
            {acting && <span className="shrink-0 whitespace-pre"> · {acting.role}</span>}
          </span>
        </span>
        <ChevronDown className="size-4 shrink-0 text-slate-400" aria-hidden="true" />
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={8}
          className="z-50 w-72 rounded-xl border border-slate-200 bg-white p-1.5 shadow-lg shadow-slate-900/10"
        >
          <DropdownMenu.Label className="px-2.5 py-1.5 text-xs font-medium text-slate-500">
            Act as
          </DropdownMenu.Label>
          <DropdownMenu.RadioGroup value={acting?.id ?? PERSONAL} onValueChange={choose}>
            <DropdownMenu.RadioItem value={PERSONAL} className={itemClasses}>
              <UserRound className="size-4 text-slate-400" aria-hidden="true" />
              <span className="flex-1">Personal</span>
              <DropdownMenu.ItemIndicator>
                <Check className="size-4 text-brand-600" aria-hidden="true" />
              </DropdownMenu.ItemIndicator>
            </DropdownMenu.RadioItem>
            {organizations.data?.map((organization) => (
              <DropdownMenu.RadioItem key={organization.id} value={organization.id} className={itemClasses}>
                <Building2 className="size-4 text-slate-400" aria-hidden="true" />
                <span className="min-w-0 flex-1 truncate">{organization.name}</span>
                <RoleBadge role={organization.role} />
                <DropdownMenu.ItemIndicator>
                  <Check className="size-4 text-brand-600" aria-hidden="true" />
                </DropdownMenu.ItemIndicator>
              </DropdownMenu.RadioItem>
            ))}
          </DropdownMenu.RadioGroup>
          {organizations.isPending && (
            <p className="px-2.5 py-2 text-sm text-slate-500">Loading organizations…</p>
          )}
          {organizations.isError && (
            <p role="alert" className="px-2.5 py-2 text-sm text-red-700">
              Your organizations could not be loaded.
            </p>
          )}
          <DropdownMenu.Separator className="my-1 h-px bg-slate-100" />
          <DropdownMenu.Item asChild className={itemClasses}>
            <Link to="/organizations#create">
              <Plus className="size-4 text-slate-400" aria-hidden="true" />
              Create organization
            </Link>
          </DropdownMenu.Item>
          {acting && (
            <DropdownMenu.Item asChild className={itemClasses}>
              <Link to={`/organizations/${encodeURIComponent(acting.id)}`}>
                <Settings className="size-4 text-slate-400" aria-hidden="true" />
                Manage organization
              </Link>
            </DropdownMenu.Item>
          )}
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
