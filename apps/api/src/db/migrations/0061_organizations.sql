-- Organizations (docs/decisions/084): a business buys and sells as a team. An organization is an
-- account like a person's (a `users` row of kind 'organization'), so its wallet, plans, payment
-- methods, keys, apps, payouts and receipts are the ones every account has, keyed by its id; no
-- one signs in as it (its issuer is 'promptmint:organization', which no token names). People act
-- for it by membership, with a role.
ALTER TABLE users ADD COLUMN kind text NOT NULL DEFAULT 'person';
--> statement-breakpoint
ALTER TABLE users ADD CONSTRAINT users_kind CHECK (kind in ('person', 'organization'));
--> statement-breakpoint
-- What an organization has beyond an account: the details its receipts carry.
CREATE TABLE organizations (
  id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  billing_email text,
  billing_address text NOT NULL DEFAULT '',
  tax_id text NOT NULL DEFAULT '',
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE TABLE organization_members (
  organization_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL,
  -- What this member's calls may spend of the organization's money per UTC calendar month (cents);
  -- null: no budget of their own (the keys' limits and the wallet still apply).
  monthly_budget_cents bigint,
  added_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT organization_members_pkey PRIMARY KEY (organization_id, user_id),
  CONSTRAINT organization_members_role CHECK (role in ('owner', 'admin', 'developer', 'billing', 'viewer')),
  CONSTRAINT organization_members_budget_nonnegative CHECK (monthly_budget_cents IS NULL OR monthly_budget_cents >= 0)
);
--> statement-breakpoint
CREATE INDEX organization_members_user_idx ON organization_members (user_id);
--> statement-breakpoint
-- An invitation mailed to an address: the link's token is kept as its SHA-256 only.
CREATE TABLE organization_invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL,
  token_hash text NOT NULL,
  invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_by uuid REFERENCES users(id) ON DELETE SET NULL,
  revoked_at timestamptz,
  CONSTRAINT organization_invitations_role CHECK (role in ('owner', 'admin', 'developer', 'billing', 'viewer'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX organization_invitations_token_key ON organization_invitations (token_hash);
--> statement-breakpoint
CREATE UNIQUE INDEX organization_invitations_one_pending ON organization_invitations (organization_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;
--> statement-breakpoint
-- Who made an organization's key (a member); null for a person's own key. The key works while its
-- maker is a member whose role may call (keys.service.ts), and is revoked when they are removed.
ALTER TABLE api_keys ADD COLUMN created_by uuid REFERENCES users(id) ON DELETE CASCADE;
--> statement-breakpoint
-- Which member of the paying organization made the call (their key's maker, or the signed-in member).
ALTER TABLE invocations ADD COLUMN member_id uuid;
--> statement-breakpoint
-- A member's spend of the organization's money in one UTC month, and the reservations of their
-- calls in flight: the same two-table scheme as keys' spend limits (decision 035).
CREATE TABLE member_spend (
  organization_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  period_start timestamptz NOT NULL,
  spent_micros bigint NOT NULL,
  CONSTRAINT member_spend_pkey PRIMARY KEY (organization_id, user_id, period_start),
  CONSTRAINT member_spend_not_negative CHECK (spent_micros >= 0)
);
--> statement-breakpoint
CREATE TABLE member_spend_reservations (
  call_id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  period_start timestamptz NOT NULL,
  micros bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX member_spend_reservations_expiry_idx ON member_spend_reservations (expires_at);
--> statement-breakpoint
-- Every action in an organization: who, what, when (owners and admins read it).
CREATE TABLE organization_audit_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
  action text NOT NULL,
  target text NOT NULL DEFAULT '',
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX organization_audit_events_org_idx ON organization_audit_events (organization_id, created_at DESC, id);
--> statement-breakpoint
-- Membership decides what a key and a signed-in member may do: every process must hear its changes
-- at once (lib/lookup-cache.ts, decision 040).
CREATE TRIGGER pm_lookups_organization_members AFTER UPDATE OR DELETE OR TRUNCATE ON "organization_members"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
