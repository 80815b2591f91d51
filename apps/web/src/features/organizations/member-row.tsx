import type { Member, Organization, OrganizationRole } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { RoleBadge } from "../../components/organizations/role-badge";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { inputClasses } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";
import { formatCents, formatMicros } from "../../lib/format";
import { accountMay, ORGANIZATION_ROLES } from "../../lib/organization-capabilities";
import { useUpdateMember } from "./api/members";

/** The roles a manager may give: only an owner makes (or unmakes) owners. */
function assignableRoles(myRole: OrganizationRole): readonly OrganizationRole[] {
  return myRole === "owner" ? ORGANIZATION_ROLES : ORGANIZATION_ROLES.filter((role) => role !== "owner");
}

/** Whether the caller may change the member's role, budget or membership. */
function canChangeMember(myRole: OrganizationRole, member: Member): boolean {
  return accountMay(myRole, "manage") && (myRole === "owner" || member.role !== "owner");
}

const MAX_BUDGET_DOLLARS = 1_000_000;

/** A typed budget in dollars as cents (empty: no budget), or the problem with it. */
export function budgetCentsOf(text: string): { cents: number | null } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { cents: null };
  const dollars = Number(trimmed);
  if (!Number.isFinite(dollars) || dollars < 0 || dollars > MAX_BUDGET_DOLLARS)
    return { problem: `Budget must be between $0 and $${MAX_BUDGET_DOLLARS.toLocaleString("en-US")}` };
  return { cents: Math.round(dollars * 100) };
}

const budgetText = (cents: number | null) => (cents === null ? "" : (cents / 100).toFixed(2));

/** One member: who, their role (a select for managers), budget and spend, Remove or Leave. */
export function MemberRow({
  organization,
  member,
  isMe,
  onRemove,
}: {
  organization: Organization;
  member: Member;
  isMe: boolean;
  onRemove: () => void;
}) {
  const update = useUpdateMember(organization.id);
  const [budget, setBudget] = useState(() => budgetText(member.monthly_budget_cents));
  const [problem, setProblem] = useState<string>();
  // Said under the field once the budget typed is saved, until it is typed again.
  const [budgetSaved, setBudgetSaved] = useState(false);
  const editable = canChangeMember(organization.role, member);
  const spent =
    member.monthly_budget_cents === null
      ? `${formatMicros(member.spent_this_month_micros)} spent this month`
      : `${formatMicros(member.spent_this_month_micros)} of ${formatCents(member.monthly_budget_cents)} spent this month`;
  const budgetId = `budget-${member.user_id}`;

  const changeRole = (role: OrganizationRole) =>
    update.mutate({ organizationId: organization.id, userId: member.user_id, changes: { role } });

  const saveBudget = (event: FormEvent) => {
    event.preventDefault();
    const parsed = budgetCentsOf(budget);
    if ("problem" in parsed) return setProblem(parsed.problem);
    setProblem(undefined);
    setBudgetSaved(false);
    update.mutate(
      {
        organizationId: organization.id,
        userId: member.user_id,
        changes: { monthly_budget_cents: parsed.cents },
      },
      { onSuccess: () => setBudgetSaved(true) },
    );
  };

  return (
    <li className="grid gap-3 px-5 py-4 lg:grid-cols-[minmax(0,1fr)_9rem_16rem_6rem] lg:items-start lg:gap-4">
      <div className="min-w-0">
        <p className="truncate font-medium text-slate-900">
          {member.name}
          {isMe && <span className="ml-1.5 text-sm font-normal text-slate-500">(you)</span>}
        </p>
        <p className="truncate text-sm text-slate-500">{member.email}</p>
      </div>
      <div>
        <MobileCaption>Role</MobileCaption>
        {editable ? (
          <select
            aria-label={`Role of ${member.name}`}
            className={cn(inputClasses, "h-9 pr-8")}
            value={member.role}
            disabled={update.isPending}
            onChange={(event) => changeRole(event.target.value as OrganizationRole)}
          >
            {assignableRoles(organization.role).map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        ) : (
          <RoleBadge role={member.role} />
        )}
      </div>
      <div>
        <MobileCaption>Monthly budget (USD)</MobileCaption>
        {editable ? (
          <form onSubmit={saveBudget} noValidate className="flex items-start gap-2">
            <div className="min-w-0 flex-1">
              <label htmlFor={budgetId} className="sr-only">
                Monthly budget of {member.name} (USD)
              </label>
              <input
                id={budgetId}
                type="number"
                inputMode="decimal"
                min={0}
                step={0.01}
                placeholder="No budget"
                className={cn(inputClasses, "h-9")}
                value={budget}
                aria-invalid={problem ? true : undefined}
                aria-describedby={`${budgetId}-spent`}
                onChange={(event) => {
                  setBudget(event.target.value);
                  setProblem(undefined);
                  setBudgetSaved(false);
                }}
              />
            </div>
            <Button type="submit" variant="secondary" size="sm" className="h-9" busy={update.isPending}>
              Save
            </Button>
          </form>
        ) : (
          <p className="text-sm text-slate-700">
            {member.monthly_budget_cents === null
              ? "No budget"
              : `${formatCents(member.monthly_budget_cents)} a month`}
          </p>
        )}
        <p id={`${budgetId}-spent`} className="mt-1 text-xs text-slate-500">
          {spent}
        </p>
        {problem && <p className="mt-1 text-xs text-red-700">{problem}</p>}
        <p role="status" className="mt-1 text-xs font-medium text-green-700 empty:hidden">
          {budgetSaved && !update.isPending ? "Budget saved" : ""}
        </p>
      </div>
      <div className="lg:text-right">
        {isMe ? (
          <Button variant="secondary" size="sm" onClick={onRemove} aria-label={`Leave ${organization.name}`}>
            Leave
          </Button>
        ) : (
          editable && (
            <Button variant="secondary" size="sm" onClick={onRemove} aria-label={`Remove ${member.name}`}>
              Remove
            </Button>
          )
        )}
      </div>
      {update.isError && (
        <Alert tone="error" className="lg:col-span-4">
          {getErrorMessage(update.error)}
        </Alert>
      )}
    </li>
  );
}

/** On a phone the list has no header row: each field says what it is (its label names the member). */
function MobileCaption({ children }: { children: string }) {
  return (
    <span aria-hidden="true" className="mb-1 block text-xs font-medium text-slate-500 lg:hidden">
      {children}
    </span>
  );
}
