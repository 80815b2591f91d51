import path from "node:path";
import { parseArgs } from "node:util";
import { type CreateApiKey, CreateApiKeySchema, CreateApplicationSchema } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import { EMBEDDED_ISSUER_KEY, loadConfig } from "../config.ts";
import { type Database, openDatabase } from "../db/client.ts";
import { appLabels, applications, appVersions, identityAccounts } from "../db/schema/index.ts";
import { createAccount } from "../identity/accounts.ts";
import { createSecretBox } from "../lib/secrets.ts";
import { recordInvocation } from "../modules/analytics/call-records.ts";
import { maintainInvocationPartitions } from "../modules/analytics/invocation-partitions.ts";
import { createApplication, updateApplication } from "../modules/applications/applications.service.ts";
import { type LocalUser, upsertUserFromToken } from "../modules/auth/auth.service.ts";
import { closeHold, placeHold, spendFromHold } from "../modules/billing/call-payment/holds.ts";
import { creditTopUp } from "../modules/billing/postings.ts";
import { hasPaidFor, putMyReview, replyToReview } from "../modules/explore/reviews.service.ts";
import { createApiKey } from "../modules/keys/keys.service.ts";

/**
 * `npm run seed:demo [-- --days 30]`: a demo creator with three apps, three capped API keys and N
 * days of calls, recorded through the same code as real calls (holds, settlement, rollups), so every
 * screen shows data.
 */
const { values } = parseArgs({ options: { days: { type: "string", default: "30" } } });
const days = Math.min(365, Math.max(1, Number.parseInt(values.days ?? "30", 10) || 30));
const config = loadConfig();
if (!config.oidc.embedded || !config.oidc.issuer) {
  console.error("seed:demo creates sign-in accounts on the embedded issuer; unset OIDC_ISSUER to use it.");
  process.exit(1);
}
const issuer = EMBEDDED_ISSUER_KEY;
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, "pgdata"),
});
const db = database.db;
const PASSWORD = "Mint-sandbox-2026";

async function person(email: string, displayName: string, creator: boolean): Promise<LocalUser> {
  const [existing] = await db.select().from(identityAccounts).where(eq(identityAccounts.email, email));
  const account =
    existing ??
    (await createAccount(db, { email, password: PASSWORD, displayName }).then((r) =>
      r.ok ? r.account : undefined,
    ));
  if (!account) throw new Error(`could not create ${email}`);
  const token = {
    issuer,
    subject: account.id,
    claims: { sub: account.id, email, name: displayName },
    raw: "",
  };
  return upsertUserFromToken(db, token, { creator, refreshEmail: true });
}

const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[random(0, items.length - 1)] as T;

try {
  const creator = await person("demo@promptmint.dev", "Demo Creator", true);
  const customer = await person("customer@promptmint.dev", "Demo Customer", false);
  const existingApps = await db.select().from(applications).where(eq(applications.ownerId, creator.id));
  if (existingApps.length > 0) {
    console.log(`The demo creator already has ${existingApps.length} apps; nothing to do.`);
  } else {
    const secrets = createSecretBox(config.secretKey);
    const specs = [
      {
        name: "Blog Post Writer",
        description: "Writes SEO-friendly blog posts on any topic.",
        visibility: "public",
        price_cents: 25,
      },
      {
        name: "Support Chatbot",
        description: "Answers customer questions politely.",
        interaction_mode: "chat",
        visibility: "public",
        // At least the price guard's minimum for the starter model (7¢ for gpt4 at 1,000 max tokens).
        price_cents: 10,
      },
      {
        name: "Research Agent",
        description: "A Dify workflow that researches a question.",
        type: "workflow",
        provider_config: { app_id: "demo-app", api_key: "app-demo-key-0000" },
      },
    ];
    const apps = [];
    for (const spec of specs) {
      const app = await createApplication(db, secrets, creator, CreateApplicationSchema.parse(spec));
      // Published through the product's own rules (the price guard), so the demo is what a
      // creator could have made and stays editable.
      if (spec.type !== "workflow")
        await updateApplication(
          db,
          app,
          { status: "live" },
          { priceNoticeMs: 0, feePercent: config.platformFeePercent },
        );
      apps.push(app);
    }
    // Keys with every cap (spend limit, expiry, allowed apps), so the keys page shows them full.
    const [blog, chatbot] = apps;
    const keySpecs: CreateApiKey[] = [
      {
        name: "Production backend",
        spend_limit_cents: 5_000,
        limit_reset: "monthly",
        expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString(),
        allowed_apps: [blog?.slug, chatbot?.slug].filter((slug): slug is string => slug !== undefined),
      },
      {
        name: "Zapier automation for the support inbox",
        spend_limit_cents: 250,
        limit_reset: "daily",
        allowed_apps: chatbot ? [chatbot.slug] : [],
      },
      { name: "Local testing", expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString() },
    ];
    for (const spec of keySpecs) await createApiKey(db, creator, CreateApiKeySchema.parse(spec));
    await creditTopUp(db, {
      userId: customer.id,
      amountCents: 100_000,
      reference: `demo-top-up-${customer.id}`,
      description: "Demo top-up",
    });
    const users = ["alice", "bob", "carol", "dave", "erin", "frank", null] as const;
    const errorTypes = ["upstream_timeout", "upstream_failed", "upstream_failed", "unavailable"] as const;
    // The version each prompt app's calls name (its production version): the analytics' "By
    // version" table and the recent invocations' Version column show it (issue 31).
    const versionOf = new Map<string, number>();
    for (const app of apps) {
      const [row] = await db
        .select({ version: appVersions.version })
        .from(appLabels)
        .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
        .where(and(eq(appLabels.applicationId, app.id), eq(appLabels.name, "production")));
      if (row) versionOf.set(app.id, row.version);
    }
    let count = 0;
    for (let daysAgo = days - 1; daysAgo >= 0; daysAgo--) {
      for (const app of apps) {
        const calls = app.type === "workflow" ? random(0, 6) : random(5, 30);
        for (let i = 0; i < calls; i++) {
          const at = new Date(Date.now() - daysAgo * 86_400_000 - random(0, 20 * 3600) * 1000);
          const success = Math.random() < 0.93;
          const paid = success;
          const holdId = paid
            ? await placeHold(db, {
                payerId: customer.id,
                applicationId: app.id,
                creatorId: creator.id,
                amountCents: app.priceCents,
                ttlSeconds: 300,
                topUpUrl: "",
              })
            : undefined;
          const id = crypto.randomUUID();
          await recordInvocation(db as Database, {
            id,
            applicationId: app.id,
            callerUserId: customer.id,
            apiKeyId: null,
            endUser: pick(users),
            mode: app.interactionMode,
            model: app.type === "prompt" ? "gpt-4-turbo" : "dify",
            appVersion: versionOf.get(app.id) ?? null,
            status: success ? "success" : "error",
            errorType: success ? undefined : pick(errorTypes),
            latencyMs: random(250, success ? 4000 : 30_000),
            inputTokens: random(20, 400),
            outputTokens: success ? random(50, 900) : 0,
            chargedCents: paid ? app.priceCents : 0,
            holdId,
            settle: holdId
              ? async (tx) =>
                  (await spendFromHold(tx, holdId, {
                    amountCents: app.priceCents,
                    feePercent: config.platformFeePercent,
                  })) ?? "refused"
              : undefined,
            createdAt: at,
          });
          // The hold's close posts its call to the ledger (decision 020).
          if (holdId) await closeHold(db, holdId);
          count++;
        }
      }
    }
    // The customer paid for its calls, so may review it (decision 081): Explore shows a rating.
    if (blog && (await hasPaidFor(db as Database, blog, customer.id))) {
      const review = await putMyReview(db as Database, blog, customer.id, {
        rating: 5,
        body: "Drafts I only need to polish. Worth every cent.",
      });
      await replyToReview(
        db as Database,
        blog,
        creator.id,
        review.id,
        "Thank you! More tones are on the way.",
      );
    }
    console.log(`Seeded ${apps.length} apps and ${count} invocations over ${days} days.`);
    // The backdated calls went to the default partition; each day gets its own (decision 038).
    await maintainInvocationPartitions(db as Database, { retentionDays: config.invocationRetentionDays });
  }
  console.log(`Sign in at ${config.publicUrl}/login as demo@promptmint.dev with password ${PASSWORD}`);
} finally {
  await database.close();
}
