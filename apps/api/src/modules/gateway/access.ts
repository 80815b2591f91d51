import { isUuid } from "@promptmint/contracts";
import { and, eq, isNull, or } from "drizzle-orm";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, invocations, users } from "../../db/schema/index.ts";
import { authenticates } from "../../lib/body-limits.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { isUserSuspended } from "../admin/suspensions.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import type { PaidResource } from "../billing/agent-payments/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import { createApiKey } from "../keys/keys.service.ts";
import { bazaarDiscoveryOf } from "./agent-discovery.ts";
import type { GatewayDeps } from "./gateway-call.ts";

/**
 * One of the caller's own calls to the app (its invocation; the message or run id Dify clients
 * hold), or undefined: another caller's is not found. With `user`, only that Dify end user's
 * successful calls count (a message to rate).
 */
export async function findOwnCall(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  id: string,
  message?: { user: string | undefined },
): Promise<typeof invocations.$inferSelect | undefined> {
  if (!isUuid(id)) return undefined;
  const endUser = message?.user
    ? eq(invocations.endUser, message.user)
    : or(isNull(invocations.endUser), eq(invocations.endUser, ""));
  const [found] = await db
    .select()
    .from(invocations)
    .where(
      and(
        eq(invocations.id, id),
        eq(invocations.applicationId, application.id),
        eq(invocations.callerUserId, caller.id),
        message ? and(eq(invocations.status, "success"), endUser) : undefined,
      ),
    );
  return found;
}

declare module "fastify" {
  interface FastifyRequest {
    /**
     * A request without credentials while agent payments are on (docs/decisions/052, 070): what it
     * calls is paid by the credential of a payment rail it carries, into its payer's balance.
     */
    payingAgent: boolean;
  }
}

/**
 * Who may call a paid endpoint: a caller with an API key or a sign-in token, or, when agent
 * payments are on (X402_*, MPP_*), anyone without credentials, who pays for the call itself
 * (`findAppForCall`). Credentials that are sent are always checked.
 */
export function callerOrAgent(deps: Pick<GatewayDeps, "guards" | "agentPayments">) {
  return authenticates(async (request: FastifyRequest) => {
    refuseTwoPayers(deps, request);
    if (isAgentRequest(deps, request)) {
      request.payingAgent = true;
      return;
    }
    await deps.guards.requireCaller(request);
  });
}

/**
 * A call is paid by the account its credentials name, or by the agent's own payment, never both:
 * credentials beside a `PAYMENT-SIGNATURE` would leave the payment unused while the account pays
 * (a header ignored in silence), so the request is refused, nothing charged, the payment unspent.
 */
export function refuseTwoPayers(deps: Pick<GatewayDeps, "agentPayments">, request: FastifyRequest): void {
  if (!request.headers.authorization || request.headers["payment-signature"] === undefined) return;
  if (isPaymentAuthorization(request.headers.authorization)) return;
  throw new AppError(
    "bad_request",
    deps.agentPayments
      ? "Send PAYMENT-SIGNATURE without an Authorization header: a call is paid either by the account of its credentials or by an x402 payment, not both. Nothing was charged; the payment was not used."
      : "This server does not take x402 payments: send the request without PAYMENT-SIGNATURE. Nothing was charged.",
    {
      fields: {
        "payment-signature": deps.agentPayments
          ? "cannot be sent with Authorization"
          : "is not accepted here (x402 is off)",
      },
    },
  );
}

/** A request agent payments may pay for: no credentials (MPP's `Authorization: Payment` is a payment), and a rail is on. */
export function isAgentRequest(deps: Pick<GatewayDeps, "agentPayments">, request: FastifyRequest): boolean {
  const authorization = request.headers.authorization;
  return deps.agentPayments !== undefined && (!authorization || isPaymentAuthorization(authorization));
}

/** MPP's credential travels in `Authorization` under its own scheme, `Payment`: a payment, not a credential. */
const isPaymentAuthorization = (authorization: string) => /^Payment\s/i.test(authorization);

/**
 * The caller of an agent request that pays for nothing (MCP's handshake and listings, the
 * catalogue's search): no account, sees only what anyone may call. Never recorded anywhere.
 */
export const ANONYMOUS_CALLER: LocalUser = {
  id: "00000000-0000-0000-0000-000000000000",
  issuer: "x402",
  subject: "anonymous",
  username: "anonymous",
  email: "",
  firstName: "",
  lastName: "",
  displayName: "Anonymous agent",
  isActive: true,
  dateJoined: new Date(0),
  updatedAt: new Date(0),
  sessionsValidAfter: null,
  emailVerified: false,
  kind: "person",
};

/** The largest budget an agent may prepay in one payment (`Promptmint-Prepay-Cents`), in cents. */
export const MAX_PREPAY_CENTS = 10_000;

/**
 * The app a paid call is for, and who calls it. With credentials: the caller, and an app they may
 * call (applications/callable-app.ts). An agent request: a live app anyone may call, and then its
 * payment: none sent → 402 with every rail's challenge and the remedy; sent → paid into the payer's
 * balance (agent-payments/balances.ts; 402 naming what is wrong otherwise), and the caller is the
 * payer's account-less user, whose call is then paid from that balance like any wallet call. The
 * rail's answer headers (x402's PAYMENT-RESPONSE, MPP's Payment-Receipt) go out with the answer.
 *
 * `Promptmint-Prepay-Cents` asks the payment to cover a budget larger than one call (up to
 * MAX_PREPAY_CENTS); `Promptmint-Balance-Key: issue` asks for an API key of the payer's
 * account-less user, sent once in the answer's `Promptmint-Balance-Key` header: with it the agent
 * spends its balance without paying again, reads it, and asks the rest back (agents.routes.ts).
 */
export async function findAppForCall(
  deps: Pick<GatewayDeps, "db" | "agentPayments" | "publicUrl">,
  request: FastifyRequest,
  slug: string,
  /** The endpoint's own check of the app (its mode), before anything is paid. */
  accept: (application: ApplicationRow) => void = () => {},
  reply?: FastifyReply,
): Promise<{ application: ApplicationRow; caller: LocalUser }> {
  const agentPayments = deps.agentPayments;
  if (!request.payingAgent || request.user || !agentPayments) {
    const caller = currentUser(request);
    const application = await findCallableApp(deps.db, slug, caller);
    accept(application);
    return { application, caller };
  }
  const application = await findCallableApp(deps.db, slug, ANONYMOUS_CALLER);
  accept(application);
  const priceCents = effectivePriceCents(application);
  if (priceCents <= 0)
    throw new AppError("unauthorized", "This app is free: call it with an API key or a sign-in token", {
      headers: { "www-authenticate": "Bearer" },
    });
  const resource: PaidResource = {
    priceCents: Math.max(priceCents, prepayOf(request)),
    url: `${deps.publicUrl}${request.url.split("?")[0]}`,
    description: `One call of '${application.name}' on Promptmint`,
    // The endpoint's input and output for x402 discovery (bazaar, docs/decisions/073).
    discovery: bazaarDiscoveryOf(request.url, application),
  };
  const paid = agentPayments.credentialOf(request.headers);
  if (!paid) throw await agentPayments.challenge(resource);
  const wantsKey = balanceKeyWanted(request);
  const payment = await agentPayments.pay(paid, { ...resource, applicationId: application.id });
  // A payer gone while its payment settled is given nothing and charged for nothing (decision 064):
  // its call does not run, the money stays on its balance. Its connection is what says so, for
  // blocking calls as for streams (a blocking wallet call is charged once answered, heard or not).
  if (request.raw.socket?.destroyed === true)
    throw new AppError(
      "bad_request",
      `The caller left while its payment ${payment.paymentId} settled: the call did not run, and the payment is on the payer's balance`,
    );
  const [caller] = await deps.db.select().from(users).where(eq(users.id, payment.payerUserId));
  if (!caller) throw new Error("an agent payer's user is missing");
  if (!caller.isActive || (await isUserSuspended(deps.db, caller.id)))
    throw new AppError("account_suspended", "This payer is suspended by the platform's operator");
  const headers: Record<string, string> = { ...payment.headers };
  // Paid already: a key that cannot be made (the payer holds as many as it may) must not cost the
  // call. The answer says why in its own header instead of the key.
  if (wantsKey) {
    const issued = await balanceKeyOf(deps.db, caller);
    if (issued.key !== undefined) headers["promptmint-balance-key"] = issued.key;
    else headers["promptmint-balance-key-refused"] = issued.refused;
  }
  reply?.headers(headers);
  // The payment's own id answers a retry once (x402's payment-identifier), unless the request
  // names its own Idempotency-Key.
  if (payment.idempotencyId && request.headers["idempotency-key"] === undefined)
    request.headers["idempotency-key"] = `payment-identifier:${payment.idempotencyId}`;
  request.user = caller;
  return { application, caller };
}

/** The budget an agent asks to prepay (`Promptmint-Prepay-Cents`), 0 when none; 400 naming the header when malformed. */
export function prepayOf(request: FastifyRequest): number {
  const value = request.headers["promptmint-prepay-cents"];
  if (value === undefined) return 0;
  const cents =
    typeof value === "string" && /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isInteger(cents) || cents < 1 || cents > MAX_PREPAY_CENTS)
    throw invalidFields({
      "promptmint-prepay-cents": `must be a whole number of cents from 1 to ${MAX_PREPAY_CENTS}`,
    });
  return cents;
}

/** Whether the agent asks for its balance key (`Promptmint-Balance-Key: issue`); 400 for any other value. */
export function balanceKeyWanted(request: FastifyRequest): boolean {
  const value = request.headers["promptmint-balance-key"];
  if (value === undefined) return false;
  if (value === "issue") return true;
  throw invalidFields({ "promptmint-balance-key": "the only value a request may send is `issue`" });
}

/** How long a balance key lives: the balance's lifetime as far as the API goes. */
const BALANCE_KEY_DAYS = 30;

/**
 * The balance key an agent asked for, once it paid: a payer that holds as many keys as it may gets
 * the reason instead (`refused`), and its paid call still runs.
 */
export async function balanceKeyOf(
  db: Database,
  payer: LocalUser,
): Promise<{ key: string; refused?: undefined } | { key?: undefined; refused: string }> {
  try {
    return { key: (await issueBalanceKey(db, payer)).key };
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "conflict") throw error;
    return { refused: error.message };
  }
}

/** A fresh API key of the payer's account-less user: its balance, spent and read without paying again. */
function issueBalanceKey(db: Database, payer: LocalUser) {
  return createApiKey(db, payer, {
    name: "Agent balance",
    expires_at: new Date(Date.now() + BALANCE_KEY_DAYS * 86_400_000).toISOString(),
  });
}
