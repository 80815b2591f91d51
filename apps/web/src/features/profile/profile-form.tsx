import { zodResolver } from "@hookform/resolvers/zod";
import { type Profile, type ProfileUpdate, ProfileUpdateSchema, type User } from "@promptmint/contracts";
import { useEffect, useState } from "react";
import { useForm } from "react-hook-form";
import { Alert } from "../../components/ui/alert";
import { SaveChangesButton } from "../../components/ui/button";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { registeredField } from "../../lib/registered-field";
import { useUpdateProfile } from "./api/update-profile";

/** SPEC §9: how long 'Profile updated successfully!' stays on screen. */
export const PROFILE_SAVED_BANNER_MS = 3000;

// The same rules (and messages) the API applies, taken from the shared contract.
const ProfileFormSchema = ProfileUpdateSchema.shape.user
  .pick({ first_name: true, last_name: true, username: true, display_name: true })
  .required();

type ProfileFormValues = Pick<User, "first_name" | "last_name" | "username" | "display_name">;
const FORM_FIELDS = ["first_name", "last_name", "username", "display_name"] as const;

function formValuesOf({ user }: Profile): ProfileFormValues {
  return {
    first_name: user.first_name,
    last_name: user.last_name,
    username: user.username,
    display_name: user.display_name,
  };
}

/** SPEC §7: the whole user with the edits, and the creator with the display name (or null). */
function updateOf(profile: Profile, values: ProfileFormValues): ProfileUpdate {
  return {
    user: { ...profile.user, ...values },
    creator: profile.creator ? { ...profile.creator, display_name: values.display_name } : null,
  };
}

/** Maps the API's field paths ("user.username", "creator.display_name") to form fields. */
function formFieldOf(path: string): (typeof FORM_FIELDS)[number] | undefined {
  const name = path.replace(/^(user|creator)\./, "");
  return FORM_FIELDS.find((field) => field === name);
}

export function ProfileForm({ profile }: { profile: Profile }) {
  const update = useUpdateProfile();
  const [saved, setSaved] = useState(false);
  const form = useForm<ProfileFormValues>({
    resolver: zodResolver(ProfileFormSchema),
    values: formValuesOf(profile),
    resetOptions: { keepDirtyValues: true },
  });
  const { handleSubmit, setError } = form;
  const field = registeredField(form);

  useEffect(() => {
    if (!saved) return;
    const timer = window.setTimeout(() => setSaved(false), PROFILE_SAVED_BANNER_MS);
    return () => window.clearTimeout(timer);
  }, [saved]);

  const onSubmit = handleSubmit((values) => {
    setSaved(false);
    update.mutate(updateOf(profile, values), {
      onSuccess: () => setSaved(true),
      onError: (error) => {
        if (!(error instanceof ApiClientError) || !error.fields) return;
        for (const [path, message] of Object.entries(error.fields)) {
          const field = formFieldOf(path);
          if (field) setError(field, { type: "server", message });
        }
      },
    });
  });

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-6">
      {saved && <Alert tone="success">Profile updated successfully!</Alert>}
      {update.isError && <Alert tone="error">{getErrorMessage(update.error)}</Alert>}

      <div className="grid gap-5 sm:grid-cols-2">
        <TextField label="First Name" autoComplete="given-name" {...field("first_name")} />
        <TextField label="Last Name" autoComplete="family-name" {...field("last_name")} />
        <TextField label="Username" autoComplete="username" required {...field("username")} />
        <TextField
          label="Display Name"
          autoComplete="nickname"
          hint="Shown on your public applications."
          {...field("display_name")}
        />
      </div>

      <TextField
        label="Email"
        type="email"
        value={profile.user.email}
        disabled
        readOnly
        hint="Email cannot be changed through this form."
      />

      <div className="flex justify-end border-t border-slate-100 pt-5">
        <SaveChangesButton type="submit" saving={update.isPending} />
      </div>
    </form>
  );
}
