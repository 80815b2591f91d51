import {
  type CreatePackageSchema,
  type Package,
  PackageSchema,
  type UpdatePackageSchema,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { packagesQueryKey } from "./list-packages";

export type CreatePackageBody = z.input<typeof CreatePackageSchema>;
export type UpdatePackageBody = z.input<typeof UpdatePackageSchema>;

const packagesPath = (appSlug: string) => `/app/${encodeURIComponent(appSlug)}/packages/`;

/** `POST /app/{app}/packages/` (the app's owner only). */
export function createPackage(appSlug: string, body: CreatePackageBody): Promise<Package> {
  return apiRequest(packagesPath(appSlug), { method: "POST", body, schema: PackageSchema });
}

/** `PATCH /app/{app}/packages/{id}/` with the changed fields. */
export function updatePackage(appSlug: string, id: string, body: UpdatePackageBody): Promise<Package> {
  return apiRequest(`${packagesPath(appSlug)}${encodeURIComponent(id)}/`, {
    method: "PATCH",
    body,
    schema: PackageSchema,
  });
}

/** `DELETE /app/{app}/packages/{id}/`: withdraws the plan from sale; subscribers keep it. */
export async function deactivatePackage(appSlug: string, id: string): Promise<void> {
  await apiRequest(`${packagesPath(appSlug)}${encodeURIComponent(id)}/`, { method: "DELETE" });
}

/** Creates a plan, or changes one when `id` is given. */
export function useSavePackage(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id?: string; body: CreatePackageBody }) =>
      id ? updatePackage(appSlug, id, body) : createPackage(appSlug, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: packagesQueryKey(appSlug) }),
  });
}

export function useDeactivatePackage(appSlug: string) {
  return useInvalidatingMutation((id: string) => deactivatePackage(appSlug, id), packagesQueryKey(appSlug));
}
