import { isUuid } from "@promptmint/contracts";
import { and, eq, isNull, or } from "drizzle-orm";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, invocations, users } from "../../db/schema/index.ts";
import { authenticates } from "../../lib/body-limits.ts";
import { AppError } from "../../lib/errors.ts";
import { isUserSuspended } from "../admin/suspensions.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import type { AdmittedAgentPayment, PaidResource } from "../billing/agent-payments/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
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
     * A call made without credentials while agent payments are on (docs/decisions/052): its payment
     * once admitted, whether the call's payment took it over, and the settlement's header.
     */
    agentPayment: AgentCall | null;
  }
}

export interface AgentCall {
  admitted?: AdmittedAgentPayment;
  /** The call's payment owns it now (paid-call.ts): it ends it. */
  handedOver?: boolean;
  /** `PAYMENT-RESPONSE` of the settled payment, sent with the answer. */
  paymentResponse?: string;
}

/**
 * Who may call a paid endpoint: a caller with an API key or a sign-in token, or, when agent
 * payments are on (X402_*), anyone without credentials, who pays for the call itself
 * (`findAppForCall`). Credentials that are sent are always checked.
 */
export function callerOrAgent(deps: Pick<GatewayDeps, "guards" | "agentPayments">) {
  return authenticates(async (request: FastifyRequest) => {
    refuseTwoPayers(deps, request);
    if (isAgentRequest(deps, request)) {
      request.agentPayment = {};
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

/** A request agent payments may pay for: no credentials, and the rail is on. */
export function isAgentRequest(deps: Pick<GatewayDeps, "agentPayments">, request: FastifyRequest): boolean {
  return deps.agentPayments !== undefined && !request.headers.authorization;
}

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
};

/**
 * The app a paid call is for, and who calls it. With credentials: the caller, and an app they may
 * call (applications/callable-app.ts). An agent request: a live app anyone may call, and then its
 * payment: none sent → 402 with the rails' challenge (PAYMENT-REQUIRED) and the remedy; sent →
 * verified and written down (402 naming what is wrong otherwise), and the caller is the payer's
 * account-less user. The call's payment (paid-call.ts) takes the admitted payment over.
 */
export async function findAppForCall(
  deps: Pick<GatewayDeps, "db" | "agentPayments" | "publicUrl">,
  request: FastifyRequest,
  slug: string,
  /** The endpoint's own check of the app (its mode), before anything is paid. */
  accept: (application: ApplicationRow) => void = () => {},
): Promise<{ application: ApplicationRow; caller: LocalUser }> {
  const agent = request.agentPayment;
  const agentPayments = deps.agentPayments;
  if (!agent || request.user || !agentPayments) {
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
    priceCents,
    url: `${deps.publicUrl}${request.url.split("?")[0]}`,
    description: `One call of '${application.name}' on Promptmint`,
    // The endpoint's input and output for x402 discovery (bazaar, docs/decisions/073).
    discovery: bazaarDiscoveryOf(request.url, application),
  };
  const header = agentPayments.paymentHeaderOf(request.headers);
  if (!header) throw await agentPayments.challenge(resource);
  const admitted = await agentPayments.admit(header, { ...resource, applicationId: application.id });
  agent.admitted = admitted;
  const [caller] = await deps.db.select().from(users).where(eq(users.id, admitted.payerUserId));
  if (!caller) throw new Error("an x402 payer's user is missing");
  if (!caller.isActive || (await isUserSuspended(deps.db, caller.id)))
    throw new AppError("account_suspended", "This payer is suspended by the platform's operator");
  request.user = caller;
  return { application, caller };
}

/**
 * The agent payment's hooks on a paid scope: the settled payment's `PAYMENT-RESPONSE` goes out
 * with the answer, and a payment admitted for a call that never reached its payment (a refused
 * input, an Idempotency-Key replay) is ended unsettled once the answer is sent.
 */
export function installAgentPaymentHooks(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply) => {
    const response = request.agentPayment?.paymentResponse;
    if (response) reply.header("payment-response", response);
  });
  app.addHook("onResponse", async (request) => {
    const agent = request.agentPayment;
    if (!agent?.admitted || agent.handedOver) return;
    agent.handedOver = true;
    await agent.admitted
      .end(null, { feePercent: 0, recordFailed: async () => {}, log: request.log })
      .catch((err) => request.log.error({ err }, "could not end an unused x402 payment"));
  });
}
