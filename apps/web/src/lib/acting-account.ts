import type { OrganizationRole } from "@promptmint/contracts";
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { useCallback, useSyncExternalStore } from "react";

/**
 * The account the signed-in person acts for (docs/decisions/084): themselves (null) or one of
 * their organizations. Kept in local storage so a reload or a new tab acts for the same one; the
 * API client names it on every request (the `Promptmint-Organization` header).
 */
export const ACTING_ORGANIZATION_STORAGE_KEY = "pm.acting-organization";

/** The organization acted for, as last known: the id is what counts, name and role are for the nav. */
export interface ActingOrganization {
  id: string;
  name: string;
  role: OrganizationRole;
}

const ROLES = new Set<string>(["owner", "admin", "developer", "billing", "viewer"]);
const listeners = new Set<() => void>();
let cachedText: string | null | undefined;
let cachedValue: ActingOrganization | null = null;

function parse(text: string | null): ActingOrganization | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<ActingOrganization> | null;
    if (typeof value?.id !== "string" || value.id === "") return null;
    if (typeof value.name !== "string" || typeof value.role !== "string" || !ROLES.has(value.role))
      return null;
    return { id: value.id, name: value.name, role: value.role };
  } catch {
    return null;
  }
}

function readStoredText(): string | null {
  try {
    return window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The organization acted for now, or null for the person's own account. */
export function readActingOrganization(): ActingOrganization | null {
  const text = readStoredText();
  // The same object while the stored text is the same: React's external store needs a stable snapshot.
  if (text !== cachedText) {
    cachedText = text;
    cachedValue = parse(text);
  }
  return cachedValue;
}

/** Acts for `organization` from the next request on (null: the person's own account). */
export function writeActingOrganization(organization: ActingOrganization | null): void {
  try {
    if (organization) {
      const { id, name, role } = organization;
      window.localStorage.setItem(ACTING_ORGANIZATION_STORAGE_KEY, JSON.stringify({ id, name, role }));
    } else {
      window.localStorage.removeItem(ACTING_ORGANIZATION_STORAGE_KEY);
    }
  } catch {
    // Storage disabled: the person stays on their own account.
  }
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab switching changes this one too: both send the same header from then on.
  const onStorage = (event: StorageEvent) => {
    if (event.key === ACTING_ORGANIZATION_STORAGE_KEY || event.key === null) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

/** The organization acted for (null: the person's own account), re-rendering when it changes. */
export function useActingOrganization(): ActingOrganization | null {
  return useSyncExternalStore(subscribe, readActingOrganization, () => null);
}

/**
 * Query roots that are the signed-in person's whatever account they act for (their profile, roles,
 * organizations, invitations): a switch keeps them.
 */
const PERSON_QUERY_ROOTS = new Set(["profile", "roles", "admin-access", "organizations", "invitation"]);

/**
 * Every other query is reset: its data goes and what is on screen is fetched again for the new
 * account, so no page shows the previous account's wallet, keys or apps.
 */
export function forgetAccountData(queryClient: QueryClient): Promise<void> {
  return queryClient.resetQueries({
    predicate: (query) => !PERSON_QUERY_ROOTS.has(String(query.queryKey[0])),
  });
}

/** Switches the acting account: the header changes first, then the previous account's data goes. */
export function useSwitchAccount(): (organization: ActingOrganization | null) => void {
  const queryClient = useQueryClient();
  return useCallback(
    (organization) => {
      const current = readActingOrganization();
      writeActingOrganization(organization);
      if (current?.id !== organization?.id) void forgetAccountData(queryClient);
    },
    [queryClient],
  );
}
