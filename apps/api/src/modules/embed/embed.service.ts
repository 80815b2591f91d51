import { createHash, randomUUID } from "node:crypto";
import type { EmbedSettings } from "@promptmint/contracts";
import { asc, eq } from "drizzle-orm";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, embedOrigins, users } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { findApplicationBySlug } from "../applications/applications.service.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { priceFields } from "../billing/price-changes.ts";
import type { EmbedLimits } from "./embed-limits.ts";

/** How long a widget may call with one token; it asks its host page to reload it after that. */
export const EMBED_TOKEN_TTL_SECONDS = 10 * 60;
const TOKEN_AUDIENCE = "promptmint-embed";

export interface EmbedClaims {
  appId: string;
  /** The site the widget was issued to: calls are only accepted from there (or the widget itself). */
  origin: string;
  /** One widget load; chats are kept per visitor. */
  visitor: string;
}

export async function listEmbedOrigins(db: Database, applicationId: string): Promise<string[]> {
  const rows = await db
    .select({ origin: embedOrigins.origin })
    .from(embedOrigins)
    .where(eq(embedOrigins.applicationId, applicationId))
    .orderBy(asc(embedOrigins.origin));
  return rows.map((row) => row.origin);
}

/** Replaces the app's allowed origins (already validated and deduplicated by the contract). */
export async function replaceEmbedOrigins(db: Database, applicationId: string, origins: string[]) {
  await db.transaction(async (tx) => {
    await tx.delete(embedOrigins).where(eq(embedOrigins.applicationId, applicationId));
    if (origins.length > 0)
      await tx.insert(embedOrigins).values(origins.map((origin) => ({ applicationId, origin })));
  });
}

export function toEmbedSettings(
  app: ApplicationRow,
  origins: string[],
  publicUrl: string,
  spending: { limits: EmbedLimits; spentTodayCents: number },
): EmbedSettings {
  return {
    allowed_origins: origins,
    snippet: `<script src="${publicUrl}/embed.js" data-app="${app.slug}" async></script>`,
    ...priceFields(app),
    daily_cap_cents: spending.limits.dailyCapCents,
    spent_today_cents: spending.spentTodayCents,
    visitor_calls_per_hour: spending.limits.visitorCallsPerHour,
    visitor_calls_per_day: spending.limits.visitorCallsPerDay,
  };
}

/** Only live apps with visibility `embed` are served to other sites. */
export function isEmbeddable(app: ApplicationRow | undefined): app is ApplicationRow {
  return app?.status === "live" && app.visibility === "embed";
}

/** An embeddable app; anything else answers like a missing app. */
export async function findEmbeddableApp(db: Database, slug: string): Promise<ApplicationRow> {
  const app = await findApplicationBySlug(db, slug);
  if (!isEmbeddable(app)) throw notFound("Application");
  return app;
}

export async function findOwner(db: Database, app: ApplicationRow): Promise<LocalUser> {
  const [owner] = await db.select().from(users).where(eq(users.id, app.ownerId)).limit(1);
  if (!owner) throw notFound("Application");
  return owner;
}

/** The origin of a URL such as a Referer, or null when there is none. */
export function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/** Signs and checks embed tokens with a key derived from SECRET_KEY (never the key itself). */
export function createEmbedTokens(secretKey: string, now: () => number = Date.now) {
  const key = createHash("sha256").update(`promptmint embed tokens\0${secretKey}`).digest();

  return {
    issue(appId: string, origin: string): Promise<string> {
      const issuedAt = Math.floor(now() / 1000);
      return new SignJWT({ app: appId, origin, visitor: randomUUID() })
        .setProtectedHeader({ alg: "HS256" })
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + EMBED_TOKEN_TTL_SECONDS)
        .sign(key);
    },

    /** The token's claims, or a 401 saying why it cannot be used. */
    async verify(token: string): Promise<EmbedClaims> {
      try {
        const { payload } = await jwtVerify(token, key, {
          audience: TOKEN_AUDIENCE,
          algorithms: ["HS256"],
          currentDate: new Date(now()),
        });
        const { app, origin, visitor } = payload;
        if (typeof app !== "string" || typeof origin !== "string" || typeof visitor !== "string")
          throw new AppError("unauthorized", "Invalid embed token");
        return { appId: app, origin, visitor };
      } catch (error) {
        if (error instanceof AppError) throw error;
        if (error instanceof joseErrors.JWTExpired)
          throw new AppError("unauthorized", "The embed token has expired; reload the widget");
        throw new AppError("unauthorized", "Invalid embed token");
      }
    },
  };
}

export type EmbedTokens = ReturnType<typeof createEmbedTokens>;
