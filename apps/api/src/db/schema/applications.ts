import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

export const applications = pgTable(
  "applications",
  {
    id: generatedId(),
    ownerId: reference("owner_id", () => users.id, "cascade"),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    description: text("description").notNull().default(""),
    type: text("type", { enum: ["prompt", "workflow"] }).notNull(),
    interactionMode: text("interaction_mode", { enum: ["completion", "chat"] })
      .notNull()
      .default("completion"),
    visibility: text("visibility", { enum: ["private", "public", "embed"] })
      .notNull()
      .default("private"),
    status: text("status", { enum: ["draft", "live", "archived"] })
      .notNull()
      .default("draft"),
    priceCents: integer("price_cents").notNull().default(100),
    /**
     * A price increase waiting out its notice period: from `pending_price_at` on it is the price
     * (billing/price-changes.ts computes the effective price from these three columns).
     */
    pendingPriceCents: integer("pending_price_cents"),
    pendingPriceAt: timestamptz("pending_price_at"),
    providerAppId: text("provider_app_id"),
    /** AES-256-GCM ciphertext of the workflow provider's API key (lib/secrets.ts). */
    providerApiKeyEncrypted: text("provider_api_key_encrypted"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /**
     * Set when its creator deleted an app with money history (holds, charged calls, plans paid
     * for): the row stays for the ledger and analytics, the app is gone for everyone, and its slug
     * stays taken so old clients never reach, and pay, a different app (docs/decisions/023).
     */
    archivedAt: timestamptz("archived_at"),
    /**
     * A prompt app whose creator lets OpenAI-style callers pass tools (function definitions, tool
     * calls and results) through to its model (docs/decisions/053). Off by default.
     */
    allowTools: boolean("allow_tools").notNull().default(false),
  },
  (t) => [
    uniqueIndex("applications_slug_key").on(t.slug),
    index("applications_owner_idx").on(t.ownerId, t.createdAt),
    check("applications_price_positive", sql`${t.priceCents} >= 1`),
    check(
      "applications_pending_price_increase",
      sql`(${t.pendingPriceCents} is null) = (${t.pendingPriceAt} is null) and (${t.pendingPriceCents} is null or ${t.pendingPriceCents} > ${t.priceCents})`,
    ),
  ],
);
export type ApplicationRow = typeof applications.$inferSelect;

/** A prompt app's model settings; its template and schemas live in immutable versions. */
export const prompts = pgTable("prompts", {
  id: generatedId(),
  applicationId: uuid("application_id")
    .notNull()
    .unique()
    .references(() => applications.id, { onDelete: "cascade" }),
  /** Whose model keys its calls use: the platform's (cost taken from the creator's share) or the creator's own (doc 026). */
  modelKeys: text("model_keys", { enum: ["platform", "creator"] })
    .notNull()
    .default("platform"),
  /** A version takes `production` only after a passed eval run of it (docs/decisions/059). */
  requirePassingEval: boolean("require_passing_eval").notNull().default(false),
  updatedAt: updatedAt(),
});

/** One arm of an experiment: a version and its share of the traffic, in whole percent. */
export interface ExperimentArm {
  version: number;
  percent: number;
}

/** What ends an experiment by itself (releases/experiment-rules.ts). */
export interface ExperimentRules {
  max_error_rate?: number;
  min_margin_micros?: number;
  min_calls: number;
  promote_winner_after_calls?: number;
}

/** A guarded rollout's schedule and state (docs/decisions/077; contracts' RolloutSchema). */
export interface RolloutState {
  status: "running" | "completed" | "rolled_back" | "stopped";
  from_version: number;
  to_version: number;
  steps: number[];
  step_index: number;
  percent: number;
  step_minutes: number;
  step_started_at: string;
  next_step_at: string | null;
  bounds: {
    max_error_rate?: number;
    max_latency_p95_ms?: number;
    min_margin_micros?: number;
    min_online_score?: number;
    min_calls: number;
  };
  history: {
    at: string;
    percent: number;
    action: "start" | "advance" | "hold" | "rollback" | "complete" | "stop";
    reason: string;
  }[];
}

/**
 * An app's production traffic split between versions (docs/decisions/058): a prompt's versions or
 * a workflow's provider configurations (migration 0045). At most one running per app (a partial
 * unique index); `control_version` is where `production` pointed at the start, where a rollback
 * returns it.
 */
export const experiments = pgTable(
  "experiments",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    status: text("status", { enum: ["running", "ended"] })
      .notNull()
      .default("running"),
    arms: jsonb("arms").$type<ExperimentArm[]>().notNull(),
    stickyBy: text("sticky_by", { enum: ["end_user", "key", "account"] }),
    rules: jsonb("rules").$type<ExperimentRules>().notNull(),
    controlVersion: integer("control_version").notNull(),
    startedBy: uuid("started_by").references(() => users.id, { onDelete: "set null" }),
    startedAt: timestamptz("started_at").notNull().defaultNow(),
    endedAt: timestamptz("ended_at"),
    endedBy: uuid("ended_by").references(() => users.id, { onDelete: "set null" }),
    outcome: text("outcome", { enum: ["rolled_back", "promoted", "stopped"] }),
    winnerVersion: integer("winner_version"),
    endReason: text("end_reason").notNull().default(""),
    /** A guarded rollout's schedule and state (migration 0056), null for a plain experiment. */
    rollout: jsonb("rollout").$type<RolloutState>(),
  },
  (t) => [
    // One running experiment per app (a prompt's or a workflow's: each app has one of them).
    uniqueIndex("experiments_one_running_per_app").on(t.applicationId).where(sql`${t.status} = 'running'`),
    index("experiments_app_idx").on(t.applicationId, t.startedAt),
  ],
);

export const uploadedFiles = pgTable("uploaded_files", {
  id: generatedId(),
  applicationId: reference("application_id", () => applications.id, "cascade"),
  uploaderId: uuid("uploader_id").references(() => users.id, { onDelete: "set null" }),
  name: text("name").notNull(),
  size: integer("size").notNull(),
  mimeType: text("mime_type").notNull(),
  extension: text("extension").notNull(),
  storagePath: text("storage_path").notNull(),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: generatedId(),
    userId: reference("user_id", () => users.id, "cascade"),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key; the key itself is never stored. */
    keyHash: text("key_hash").notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamptz("last_used_at"),
    revokedAt: timestamptz("revoked_at"),
    /** The most the key may spend from the wallet per period (decision 035); null: no limit. */
    spendLimitCents: bigNumber("spend_limit_cents"),
    /** The limit's period, a UTC calendar day, ISO week or month, or `never` (one budget for life). */
    limitReset: text("limit_reset", { enum: ["daily", "weekly", "monthly", "never"] })
      .notNull()
      .default("never"),
    /** From then on the key is refused with 401 `api_key_expired`; null: it never expires. */
    expiresAt: timestamptz("expires_at"),
    /** The only apps the key may call (ids; apps are named by slug in the API); null: any. */
    allowedAppIds: uuid("allowed_app_ids").array(),
    /**
     * The member who made an organization's key (migration 0061, decision 084); null for a
     * person's own key. The key works while its maker may call for the organization.
     */
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [
    uniqueIndex("api_keys_hash_key").on(t.keyHash),
    index("api_keys_user_idx").on(t.userId),
    check("api_keys_spend_limit_positive", sql`${t.spendLimitCents} is null or ${t.spendLimitCents} >= 1`),
  ],
);

/**
 * What a key with a spend limit has spent in one period (decision 035), in micro-dollars: the
 * sum of its wallet-paid calls' prices, and of the reservations of its calls in flight.
 */
export const apiKeySpend = pgTable(
  "api_key_spend",
  {
    keyId: reference("key_id", () => apiKeys.id, "cascade"),
    /** The period's first moment (UTC); a test may move it back to end the period. */
    periodStart: timestamptz("period_start").notNull(),
    spentMicros: bigNumber("spent_micros").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.keyId, t.periodStart] }),
    check("api_key_spend_not_negative", sql`${t.spentMicros} >= 0`),
  ],
);

/**
 * A limited key's price reserved for one call before it runs (decision 035), keyed by the call's
 * id (its invocation's). A failed call gives it back at once; the sweeper settles the rest once
 * they expire: kept for a charged invocation, given back otherwise (a crashed process's calls).
 */
export const apiKeyReservations = pgTable(
  "api_key_reservations",
  {
    callId: uuid("call_id").primaryKey(),
    keyId: reference("key_id", () => apiKeys.id, "cascade"),
    periodStart: timestamptz("period_start").notNull(),
    micros: bigNumber("micros").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [index("api_key_reservations_expiry_idx").on(t.expiresAt)],
);

/** Why a call was made (docs/decisions/078): only `customer` calls are customer analytics. */
export const INVOCATION_PURPOSES = ["customer", "eval", "owner_test", "online_eval"] as const;
export type InvocationPurpose = (typeof INVOCATION_PURPOSES)[number];

/**
 * One row per gateway call, successful or not: the source of analytics and billing. Partitioned by
 * UTC day of `created_at` (migration 0028, docs/decisions/038): the key is (id, created_at), so a
 * call is found by its id and its time; days older than INVOCATION_RETENTION_DAYS are dropped
 * (analytics/invocation-partitions.ts) after what money checks need of them is folded into the
 * `dropped_*` tables below.
 */
export const invocations = pgTable(
  "invocations",
  {
    id: uuid("id").notNull().defaultRandom(),
    // Restrict: charged calls are money history; a deletable app's free calls are deleted explicitly.
    applicationId: reference("application_id", () => applications.id, "restrict"),
    callerUserId: uuid("caller_user_id").references(() => users.id, { onDelete: "set null" }),
    apiKeyId: uuid("api_key_id").references(() => apiKeys.id, { onDelete: "set null" }),
    endUser: text("end_user"),
    conversationId: uuid("conversation_id"),
    mode: text("mode", { enum: ["completion", "chat"] }).notNull(),
    status: text("status", { enum: ["success", "error"] }).notNull(),
    errorType: text("error_type"),
    errorMessage: text("error_message"),
    model: text("model"),
    latencyMs: integer("latency_ms").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    /** Gross: the price the call was charged (whole cents; 0 when a plan covered it or it was free). */
    chargedCents: bigNumber("charged_cents").notNull().default(0),
    /** The platform's fee of that price, exact in micro-dollars (issue 17). */
    feeMicros: bigNumber("fee_micros").notNull().default(0),
    /** What the call cost at the model vendor when it ran on the platform's keys (micro-dollars). */
    modelCostMicros: bigNumber("model_cost_micros").notNull().default(0),
    /** How much of that cost came out of the creator's share of this call (at most that share). */
    modelCostDeductedMicros: bigNumber("model_cost_deducted_micros").notNull().default(0),
    /** When the rest of its model cost (not paid by its price) was taken from its creator's earnings. */
    modelCostPostedAt: timestamptz("model_cost_posted_at"),
    /**
     * The hold (wallet lease) a charged call was paid from; the hold's close posts its calls' prices
     * to the ledger (docs/decisions/020). No foreign key: append-only, written on the hot path.
     */
    holdId: uuid("hold_id"),
    /**
     * The subscription whose included call covered it, and the period it was counted in
     * (docs/decisions/025). No foreign key, like `hold_id`.
     */
    subscriptionId: uuid("subscription_id"),
    planPeriodStart: timestamptz("plan_period_start"),
    /** The prompt version that answered (prompt apps), and the experiment that chose it (decision 057). */
    appVersion: integer("app_version"),
    experimentId: uuid("experiment_id"),
    /**
     * Why the call was made (docs/decisions/078, migration 0057): customer analytics count only
     * `customer`; eval runs, the owner's tests and online-eval judges are recorded apart.
     */
    purpose: text("purpose", { enum: INVOCATION_PURPOSES }).notNull().default("customer"),
    /** The member of the paying organization who made the call (decision 084); null otherwise. */
    memberId: uuid("member_id"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: "invocations_pkey", columns: [t.id, t.createdAt] }),
    check(
      "invocations_purpose_check",
      sql`${t.purpose} in ('customer', 'eval', 'owner_test', 'online_eval')`,
    ),
    index("invocations_app_created_idx").on(t.applicationId, t.createdAt),
    index("invocations_experiment_idx")
      .on(t.experimentId, t.createdAt)
      .where(sql`${t.experimentId} is not null`),
    index("invocations_subscription_idx")
      .on(t.subscriptionId, t.planPeriodStart)
      .where(sql`${t.subscriptionId} is not null`),
    // A payer's charged calls, for their wallet statement (billing/statement.ts; migration 0024).
    index("invocations_payer_charged_idx")
      .on(t.callerUserId, t.createdAt)
      .where(sql`${t.holdId} is not null and ${t.chargedCents} > 0`),
    // The calls whose model cost a sweep still has to take from their creator (billing/model-costs.ts).
    index("invocations_model_cost_due_idx")
      .on(t.id)
      .where(sql`${t.modelCostMicros} > ${t.modelCostDeductedMicros} and ${t.modelCostPostedAt} is null`),
  ],
);

/** The calls of dropped invocation days per hold: count, fees and model cost (reconcile). */
export const droppedHoldCalls = pgTable("dropped_hold_calls", {
  holdId: uuid("hold_id").primaryKey(),
  calls: integer("calls").notNull(),
  feeMicros: bigNumber("fee_micros").notNull(),
  modelCostDeductedMicros: bigNumber("model_cost_deducted_micros").notNull(),
});

/** The charged calls of dropped invocation days per payer, app and day (wallet statement). */
export const droppedPayerCalls = pgTable(
  "dropped_payer_calls",
  {
    callerUserId: uuid("caller_user_id").notNull(),
    applicationId: uuid("application_id").notNull(),
    day: date("day").notNull(),
    calls: integer("calls").notNull(),
    chargedCents: bigNumber("charged_cents").notNull(),
    lastAt: timestamptz("last_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "dropped_payer_calls_pkey", columns: [t.callerUserId, t.applicationId, t.day] }),
  ],
);

/** The successful plan-covered calls of dropped invocation days per plan period (reconcile). */
export const droppedPlanCalls = pgTable(
  "dropped_plan_calls",
  {
    subscriptionId: uuid("subscription_id").notNull(),
    planPeriodStart: timestamptz("plan_period_start").notNull(),
    calls: integer("calls").notNull(),
  },
  (t) => [primaryKey({ name: "dropped_plan_calls_pkey", columns: [t.subscriptionId, t.planPeriodStart] })],
);

export const conversations = pgTable(
  "conversations",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    /** Who the conversation belongs to: the calling account plus the Dify `user` it passed. */
    callerUserId: reference("caller_user_id", () => users.id, "cascade"),
    endUser: text("end_user").notNull().default(""),
    name: text("name").notNull().default(""),
    /** A workflow provider's own conversation id (Dify conversation_id, Flowise sessionId). */
    providerConversationId: text("provider_conversation_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("conversations_owner_idx").on(t.applicationId, t.callerUserId, t.endUser)],
);

export const conversationMessages = pgTable(
  "conversation_messages",
  {
    id: generatedId(),
    conversationId: reference("conversation_id", () => conversations.id, "cascade"),
    query: text("query").notNull(),
    answer: text("answer").notNull(),
    inputs: jsonb("inputs").notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index("conversation_messages_conversation_idx").on(t.conversationId, t.createdAt)],
);

/**
 * A consumer's rating of an answer (Dify's message feedback, docs/decisions/031): one per call,
 * keyed by the call's invocation id (no foreign key: invocations are append-only money history).
 */
export const messageFeedbacks = pgTable(
  "message_feedbacks",
  {
    messageId: uuid("message_id").primaryKey(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    callerUserId: reference("caller_user_id", () => users.id, "cascade"),
    endUser: text("end_user").notNull().default(""),
    rating: text("rating", { enum: ["like", "dislike"] }).notNull(),
    content: text("content"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("message_feedbacks_application_idx").on(t.applicationId, t.updatedAt),
    check("message_feedbacks_rating", sql`${t.rating} in ('like', 'dislike')`),
  ],
);

/** First answer to a paid call per (caller, Idempotency-Key), replayed for 24 h. */
export const idempotencyRecords = pgTable(
  "idempotency_records",
  {
    callerKey: text("caller_key").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: jsonb("response_body"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("idempotency_records_key").on(t.callerKey, t.key)],
);
