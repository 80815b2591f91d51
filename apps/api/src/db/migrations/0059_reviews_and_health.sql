-- Ratings and reviews of apps by the people who paid for them (docs/decisions/081): one review per
-- buyer and app, editable and deletable by its author, with at most one reply by the app's creator.
CREATE TABLE app_reviews (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  author_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  rating smallint NOT NULL,
  body text NOT NULL DEFAULT '',
  reply text,
  replied_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT app_reviews_rating_range CHECK (rating BETWEEN 1 AND 5),
  CONSTRAINT app_reviews_body_length CHECK (char_length(body) <= 2000),
  CONSTRAINT app_reviews_reply_length CHECK (reply IS NULL OR char_length(reply) <= 2000)
);
--> statement-breakpoint
CREATE UNIQUE INDEX app_reviews_one_per_author ON app_reviews (application_id, author_id);
--> statement-breakpoint
CREATE INDEX app_reviews_app_updated_idx ON app_reviews (application_id, updated_at DESC, id);
--> statement-breakpoint
-- The latency of each app's answered calls per UTC day, as a histogram (docs/decisions/081): the
-- bucket is the latency floored to three significant digits (exact below a second), so a median
-- over 30 days is read from at most a few hundred rows per app and day, never from invocations.
-- Kept by the statement that keeps app_daily_stats (analytics/rollups.ts), sharded and folded the same way.
CREATE TABLE app_daily_latency (
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  day date NOT NULL,
  latency_ms integer NOT NULL,
  shard smallint NOT NULL,
  calls integer NOT NULL DEFAULT 0,
  PRIMARY KEY (application_id, day, latency_ms, shard)
);
--> statement-breakpoint
CREATE INDEX app_daily_latency_unfolded_idx ON app_daily_latency (day) WHERE shard <> 0;
--> statement-breakpoint
-- The calls already recorded in the last 30 days, as the rollups count them (not eval traffic).
INSERT INTO app_daily_latency (application_id, day, latency_ms, shard, calls)
SELECT application_id, (created_at AT TIME ZONE 'UTC')::date,
  (latency_ms / power(10, greatest(length(latency_ms::text) - 3, 0))::int)
    * power(10, greatest(length(latency_ms::text) - 3, 0))::int,
  0, count(*)
FROM invocations
WHERE status = 'success' AND purpose NOT IN ('eval', 'online_eval')
  AND created_at >= now() - interval '31 days'
GROUP BY 1, 2, 3;
--> statement-breakpoint
-- Whether a person paid for an app from their wallet (may review it): their holds of that app.
CREATE INDEX holds_payer_app_idx ON holds (payer_id, application_id);
