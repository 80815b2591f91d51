import { type Profile, ProfileSchema, type ProfileUpdate } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { profileQueryKey } from "../../../lib/profile-query";

/** `PATCH /auth/profile/`: answers the updated profile. */
export function updateProfile(update: ProfileUpdate): Promise<Profile> {
  return apiRequest("/auth/profile/", { method: "PATCH", body: update, schema: ProfileSchema });
}

export function useUpdateProfile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateProfile,
    onSuccess: (profile) => {
      queryClient.setQueryData(profileQueryKey, profile);
      void queryClient.invalidateQueries({ queryKey: profileQueryKey });
    },
  });
}
