import { z } from "zod";

/**
 * Organizations (issue 43, docs/decisions/084): a business buys and sells as a team. An
 * organization is an account like a person's: its wallet, plans, payment methods, keys, apps and
 * payouts are the ones any account has. A member acts for it by sending the header
 * `Promptmint-Organization: <organization id>` with their sign-in token; what they may do there is
 * their role's.
 */

/** The request header naming the organization a signed-in member acts for. */
export const ORGANIZATION_HEADER = "promptmint-organization";

export const OrganizationRoleSchema = z.enum(["owner", "admin", "developer", "billing", "viewer"]);
export type OrganizationRole = z.infer<typeof OrganizationRoleSchema>;

/** What each role is for, as the web app and the API's refusals say it. */
export const ORGANIZATION_ROLE_TEXT: Record<OrganizationRole, string> = {
  owner: "Everything, including other owners",
  admin: "Members, settings and everything else but owners",
  developer: "Keys, calls and apps",
  billing: "Wallet, plans, receipts, payment methods and payouts",
  viewer: "Read only",
};

const name = z
  .string({ error: "must be text" })
  .trim()
  .min(2, "must be at least 2 characters")
  .max(80, "must be at most 80 characters");

const email = z
  .string({ error: "must be text" })
  .trim()
  .max(254, "must be at most 254 characters")
  .pipe(z.email({ error: "must be an email address" }));

/** The details receipts carry under the organization's name (all optional). */
const billingDetails = {
  billing_email: email.nullable(),
  /** Legal address, as printed on receipts; lines separated by newlines. */
  billing_address: z.string({ error: "must be text" }).trim().max(500, "must be at most 500 characters"),
  /** A VAT or other tax identifier, printed on receipts. */
  tax_id: z.string({ error: "must be text" }).trim().max(40, "must be at most 40 characters"),
};

export const CreateOrganizationSchema = z.strictObject({
  name,
  billing_email: billingDetails.billing_email.optional(),
  billing_address: billingDetails.billing_address.optional(),
  tax_id: billingDetails.tax_id.optional(),
});
export type CreateOrganization = z.input<typeof CreateOrganizationSchema>;

export const UpdateOrganizationSchema = z
  .strictObject({
    name: name.optional(),
    billing_email: billingDetails.billing_email.optional(),
    billing_address: billingDetails.billing_address.optional(),
    tax_id: billingDetails.tax_id.optional(),
  })
  .refine((value) => Object.keys(value).length > 0, {
    message: "must name at least one of name, billing_email, billing_address, tax_id",
  });
export type UpdateOrganization = z.input<typeof UpdateOrganizationSchema>;

export const OrganizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The account's username: unique, made from the name at creation. */
  slug: z.string(),
  billing_email: z.string().nullable(),
  billing_address: z.string(),
  tax_id: z.string(),
  created_at: z.string(),
  /** The caller's role in it. */
  role: OrganizationRoleSchema,
  member_count: z.number().int(),
});
export type Organization = z.infer<typeof OrganizationSchema>;
export const OrganizationListSchema = z.array(OrganizationSchema);

export const MemberSchema = z.object({
  user_id: z.string(),
  name: z.string(),
  email: z.string(),
  role: OrganizationRoleSchema,
  /** What the member's calls may spend of the organization's money per UTC month; null: no budget. */
  monthly_budget_cents: z.number().int().nullable(),
  /** What they spent this UTC month (micro-dollars), calls in flight included. */
  spent_this_month_micros: z.number().int(),
  joined_at: z.string(),
});
export type Member = z.infer<typeof MemberSchema>;
export const MemberListSchema = z.array(MemberSchema);

export const UpdateMemberSchema = z
  .strictObject({
    role: OrganizationRoleSchema.optional(),
    monthly_budget_cents: z
      .number({ error: "must be a whole number of cents or null" })
      .int("must be a whole number of cents")
      .min(0, "must be at least 0")
      .max(100_000_000, "must be at most $1,000,000")
      .nullable()
      .optional(),
  })
  .refine((value) => Object.keys(value).length > 0, {
    message: "must name at least one of role, monthly_budget_cents",
  });
export type UpdateMember = z.input<typeof UpdateMemberSchema>;

export const CreateInvitationSchema = z.strictObject({
  email,
  role: OrganizationRoleSchema,
});
export type CreateInvitation = z.input<typeof CreateInvitationSchema>;

export const InvitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: OrganizationRoleSchema,
  invited_by: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  status: z.enum(["pending", "accepted", "revoked", "expired"]),
});
export type Invitation = z.infer<typeof InvitationSchema>;
export const InvitationListSchema = z.array(InvitationSchema);

/** `GET /api/invitations/{token}/`: what the link offers, for the signed-in person who holds it. */
export const InvitationPreviewSchema = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  email: z.string(),
  role: OrganizationRoleSchema,
  invited_by: z.string().nullable(),
  expires_at: z.string(),
  status: z.enum(["pending", "accepted", "revoked", "expired"]),
  /** Whether the signed-in person's address is the invited one (only they may accept). */
  email_matches: z.boolean(),
});
export type InvitationPreview = z.infer<typeof InvitationPreviewSchema>;

export const AuditEventSchema = z.object({
  id: z.string(),
  at: z.string(),
  /** Who acted: a member's name and address, or null when they no longer exist. */
  actor: z.object({ user_id: z.string(), name: z.string(), email: z.string() }).nullable(),
  /** What happened, e.g. `member.role_changed`, `key.created`, `wallet.topped_up`. */
  action: z.string(),
  /** What it happened to, as a person reads it (an address, a key's name, an app's slug). */
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;

export const AuditQuerySchema = z.strictObject({
  page: z.coerce
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(10_000, "must be at most 10000")
    .default(1),
});
export const AUDIT_PAGE_SIZE = 50;
export const AuditListSchema = z.object({
  data: z.array(AuditEventSchema),
  page: z.number().int(),
  page_size: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
});
export type AuditList = z.infer<typeof AuditListSchema>;

/** `GET /api/organizations/{id}/usage/?month=YYYY-MM`: one UTC month's calls and spend. */
export const UsageQuerySchema = z.strictObject({
  month: z
    .string({ error: "must be a month as YYYY-MM" })
    .regex(/^(20\d\d)-(0[1-9]|1[0-2])$/, "must be a month from 2000-01 to 2099-12 as YYYY-MM")
    .optional(),
});

const usageLine = {
  calls: z.number().int(),
  /** What those calls were charged (cents). */
  charged_cents: z.number().int(),
};
export const OrganizationUsageSchema = z.object({
  month: z.string(),
  total: z.object(usageLine),
  by_member: z.array(z.object({ user_id: z.string().nullable(), name: z.string(), ...usageLine })),
  by_key: z.array(z.object({ key_id: z.string().nullable(), name: z.string(), ...usageLine })),
  by_app: z.array(z.object({ slug: z.string(), name: z.string(), ...usageLine })),
});
export type OrganizationUsage = z.infer<typeof OrganizationUsageSchema>;
