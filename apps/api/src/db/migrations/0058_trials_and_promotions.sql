-- Free trials and promotion codes (issue 42, docs/decisions/080): grants a creator sponsors for a
-- consumer, spent by calls the creator pays for through the same call payment as every call.

-- A card's identity across accounts: the processor's fingerprint (Stripe's card.fingerprint; the
-- sandbox's hash of the number). Null for cards saved before this migration.
ALTER TABLE payment_methods ADD COLUMN fingerprint text;
--> statement-breakpoint
CREATE INDEX payment_methods_fingerprint_idx ON payment_methods (fingerprint) WHERE fingerprint IS NOT NULL;
--> statement-breakpoint
-- An app's free trial: `trial_calls` calls per consumer (0: none offered).
CREATE TABLE trial_offers (
  application_id uuid PRIMARY KEY REFERENCES applications(id) ON DELETE CASCADE,
  trial_calls integer NOT NULL CHECK (trial_calls BETWEEN 0 AND 1000),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
-- A creator's promotion code: an amount of credit, or a percentage of the redeemer's next top-up
-- (capped), on one app or every app of the creator; at most `max_redemptions` redemptions (the
-- CHECK holds it whatever the code does), between `starts_at` and `expires_at`.
CREATE TABLE promotion_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  creator_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  application_id uuid REFERENCES applications(id) ON DELETE CASCADE,
  code text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('amount', 'percent')),
  amount_micros bigint CHECK (amount_micros > 0),
  percent integer CHECK (percent BETWEEN 1 AND 100),
  cap_micros bigint CHECK (cap_micros > 0),
  max_redemptions integer NOT NULL CHECK (max_redemptions > 0),
  redemptions integer NOT NULL DEFAULT 0,
  starts_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT promotion_codes_redemptions_check CHECK (redemptions >= 0 AND redemptions <= max_redemptions),
  CONSTRAINT promotion_codes_value_check CHECK (
    (kind = 'amount' AND amount_micros IS NOT NULL AND percent IS NULL AND cap_micros IS NULL)
    OR (kind = 'percent' AND percent IS NOT NULL AND cap_micros IS NOT NULL AND amount_micros IS NULL)),
  CONSTRAINT promotion_codes_window_check CHECK (expires_at IS NULL OR expires_at > starts_at)
);
--> statement-breakpoint
CREATE UNIQUE INDEX promotion_codes_code_key ON promotion_codes (lower(code));
--> statement-breakpoint
CREATE INDEX promotion_codes_creator_idx ON promotion_codes (creator_id, created_at);
--> statement-breakpoint
-- What a creator sponsors for one consumer: a trial's calls on one app, or a redeemed code's
-- credit (micro-dollars) on one app or every app of the creator. Never below zero. One grant per
-- code and consumer: a code is redeemed once per person.
CREATE TABLE sponsored_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('trial', 'promotion')),
  consumer_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  creator_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  application_id uuid REFERENCES applications(id) ON DELETE CASCADE,
  promotion_code_id uuid REFERENCES promotion_codes(id) ON DELETE CASCADE,
  calls_left integer CHECK (calls_left >= 0),
  credit_left_micros bigint CHECK (credit_left_micros >= 0),
  bonus_percent integer CHECK (bonus_percent BETWEEN 1 AND 100),
  bonus_cap_micros bigint,
  bonus_applied_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT sponsored_grants_shape_check CHECK (
    (kind = 'trial' AND calls_left IS NOT NULL AND application_id IS NOT NULL AND promotion_code_id IS NULL)
    OR (kind = 'promotion' AND credit_left_micros IS NOT NULL AND promotion_code_id IS NOT NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX sponsored_grants_redemption_key ON sponsored_grants (promotion_code_id, consumer_id)
  WHERE promotion_code_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX sponsored_grants_consumer_idx ON sponsored_grants (consumer_id, creator_id);
--> statement-breakpoint
-- Who took an app's trial: 'account:<user id>', 'card:<fingerprint>', 'payer:<x402 address>'.
-- The primary key refuses the same person a second trial of an app, concurrent starts included.
CREATE TABLE trial_claims (
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  identity text NOT NULL,
  grant_id uuid NOT NULL REFERENCES sponsored_grants(id) ON DELETE CASCADE,
  PRIMARY KEY (application_id, identity)
);
--> statement-breakpoint
-- A call a grant pays for: reserved when the call is paid for (its trial call or its price taken
-- from the grant), spent when the call is recorded paid by its creator, deleted (and given back
-- to the grant) when it is not. No foreign key to invocations (partitioned by day).
CREATE TABLE sponsored_calls (
  call_id uuid PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES sponsored_grants(id) ON DELETE CASCADE,
  calls integer NOT NULL CHECK (calls >= 0),
  micros bigint NOT NULL CHECK (micros >= 0),
  state text NOT NULL CHECK (state IN ('reserved', 'spent')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX sponsored_calls_grant_idx ON sponsored_calls (grant_id);
--> statement-breakpoint
CREATE INDEX sponsored_calls_reserved_idx ON sponsored_calls (expires_at) WHERE state = 'reserved';
