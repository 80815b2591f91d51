import { z } from "zod";

export const UserSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  display_name: z.string(),
  is_active: z.boolean(),
  date_joined: z.string(),
  /** The identity provider says the person owns `email` (docs/decisions/041). */
  email_verified: z.boolean(),
});
export type User = z.infer<typeof UserSchema>;

export const CreatorSchema = z.object({
  id: z.string(),
  display_name: z.string(),
  plan: z.string(),
  credits: z.number().int(),
});
export type Creator = z.infer<typeof CreatorSchema>;

export const ProfileSchema = z.object({
  user: UserSchema,
  creator: CreatorSchema.nullable(),
});
export type Profile = z.infer<typeof ProfileSchema>;

/**
 * A username people choose. Never a colon: `x402:<network>:<address>` is the namespace of x402
 * payers' account-less users (decision 064), which no one can take by choosing it.
 */
const username = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(150, "must be at most 150 characters")
  .regex(/^[\w.@+-]+$/, "may contain only letters, digits and @ . + - _");
const personName = z.string().trim().max(150, "must be at most 150 characters");

/**
 * The SPA sends the whole user back with its edits. Read-only fields may be echoed
 * unchanged; the service refuses any attempt to change them.
 */
export const ProfileUpdateSchema = z.strictObject({
  user: z.strictObject({
    id: z.string().optional(),
    email: z.string().optional(),
    is_active: z.boolean().optional(),
    date_joined: z.string().optional(),
    email_verified: z.boolean().optional(),
    username: username.optional(),
    first_name: personName.optional(),
    last_name: personName.optional(),
    display_name: personName.optional(),
  }),
  creator: z
    .strictObject({
      id: z.string().optional(),
      plan: z.string().optional(),
      credits: z.number().int().optional(),
      display_name: personName.optional(),
    })
    .nullable()
    .optional(),
});
export type ProfileUpdate = z.infer<typeof ProfileUpdateSchema>;

export const RolesSchema = z.object({
  roles: z.array(z.enum(["user", "creator", "operator"])),
  is_creator: z.boolean(),
});
export type Roles = z.infer<typeof RolesSchema>;

export const PublicCreatorSchema = z.object({
  id: z.string(),
  display_name: z.string(),
});
export const CreatorListSchema = z.array(PublicCreatorSchema);

/** `POST /auth/verification-email/`: whether a new link was mailed (the embedded issuer only). */
export const VerificationEmailResultSchema = z.object({
  email: z.string(),
  email_verified: z.boolean(),
  sent: z.boolean(),
});
export type VerificationEmailResult = z.infer<typeof VerificationEmailResultSchema>;

export const LogoutResponseSchema = z.object({ success: z.literal(true) });
