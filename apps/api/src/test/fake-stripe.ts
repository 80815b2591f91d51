import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { createTestDatabase } from "./database.ts";
import { startTestServer, type TestServer } from "./server.ts";

/** What the official SDK sent to the fake. */
export interface SeenRequest {
  method: string;
  path: string;
  form: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

export interface FakeStripe {
  /** For STRIPE_API_URL. */
  url: string;
  seen: SeenRequest[];
  /** Stands in for Stripe.js confirming a SetupIntent: the card is then attached to its customer. */
  confirmSetup(clientSecret: string, paymentMethodId: string): void;
  /**
   * Runs before a created subscription is answered, as Stripe's webhooks can outrun its answer;
   * `lose-answer` then answers a 500 instead, as if the connection failed after Stripe acted.
   */
  beforeSubscriptionAnswer?: (subscription: {
    id: string;
    metadata: Record<string, string>;
  }) => Promise<"answer" | "lose-answer">;
  /** Connect (payouts): connected accounts, transfers, payouts and reversals the fake made. */
  connect: FakeConnect;
  close(): Promise<void>;
}

export interface FakeConnect {
  accounts: Map<string, { id: string; details_submitted: boolean; payouts_enabled: boolean }>;
  /** Transfers by id (one per idempotency key, as Stripe replays a repeated key's answer). */
  transfers: Map<
    string,
    { id: string; amount: number; destination: string; metadata: Record<string, string> }
  >;
  payouts: Map<string, { id: string; amount: number; account: string; metadata: Record<string, string> }>;
  reversals: Map<string, { id: string; transfer: string }>;
  /**
   * Decides the fate of the next Connect request: `fail` answers a 500 without acting,
   * `lose-answer` acts and then answers a 500 (the connection failed after Stripe acted).
   */
  fault?: (path: string) => "fail" | "lose-answer" | undefined;
}

/** A Stripe test card whose charges Stripe declines. */
export const DECLINED_CARD = "pm_card_chargeDeclined";

/** A billing address the API accepts with a saved card. */
export const BILLING_ADDRESS = {
  name: "Card Holder",
  line1: "1 Main St",
  city: "Austin",
  postal_code: "78701",
  country: "US",
};

/**
 * A loopback Stripe: checks the secret key the official SDK sends and answers with Stripe's
 * documented objects. A payment method belongs to the customer whose SetupIntent confirmed it
 * (`pm_mine` to the first customer created).
 */
export async function startFakeStripe(secretKey: string): Promise<FakeStripe> {
  const seen: SeenRequest[] = [];
  const setupCustomers = new Map<string, string>();
  const cardOwners = new Map<string, string>();
  const connect: FakeConnect = {
    accounts: new Map(),
    transfers: new Map(),
    payouts: new Map(),
    reversals: new Map(),
  };
  /** Stripe's idempotency: a repeated key gets the first answer, and nothing is done twice. */
  const answered = new Map<string, { status: number; body: object }>();
  const fake: FakeStripe = {
    connect,
    url: "",
    seen,
    confirmSetup(clientSecret, paymentMethodId) {
      const customer = setupCustomers.get(clientSecret.split("_secret_")[0] ?? "");
      if (!customer) throw new Error(`no setup intent for ${clientSecret}`);
      cardOwners.set(paymentMethodId, customer);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  let counter = 0;
  let firstCustomer: string | undefined;
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const form = new URLSearchParams(raw);
      const path = req.url ?? "";
      seen.push({ method: req.method ?? "", path, form, headers: req.headers });
      const json = (status: number, body: object) => {
        res.writeHead(status, { "content-type": "application/json", "request-id": `req_${++counter}` });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${secretKey}`)
        return json(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
      const post = req.method === "POST";
      const metadataOf = () =>
        Object.fromEntries(
          [...form]
            .filter(([key]) => key.startsWith("metadata["))
            .map(([key, value]) => [key.slice(9, -1), value]),
        );
      if (
        path.startsWith("/v1/accounts") ||
        path === "/v1/account_links" ||
        path.startsWith("/v1/transfers") ||
        path === "/v1/payouts"
      ) {
        const key = req.headers["idempotency-key"];
        const replayKey = post && typeof key === "string" ? `${path} ${key}` : undefined;
        const replay = replayKey ? answered.get(replayKey) : undefined;
        if (replay) return json(replay.status, replay.body);
        const fault = post ? connect.fault?.(path) : undefined;
        const error = (status: number, message: string, type = "invalid_request_error") => ({
          status,
          body: { error: { type, message } },
        });
        if (fault === "fail") {
          res.writeHead(500, { "content-type": "application/json", "stripe-should-retry": "false" });
          return res.end(
            JSON.stringify({ error: { type: "api_error", message: "An unknown error occurred" } }),
          );
        }
        const act = (): { status: number; body: object } => {
          if (post && path === "/v1/accounts") {
            const id = `acct_${++counter}`;
            const account = { id, details_submitted: false, payouts_enabled: false };
            connect.accounts.set(id, account);
            return {
              status: 200,
              body: {
                ...account,
                object: "account",
                type: form.get("type"),
                email: form.get("email"),
                requirements: {
                  currently_due: ["external_account"],
                  disabled_reason: "requirements.past_due",
                },
                metadata: metadataOf(),
              },
            };
          }
          const accountPath = /^\/v1\/accounts\/(acct_\w+)$/.exec(path);
          if (req.method === "GET" && accountPath?.[1]) {
            const account = connect.accounts.get(accountPath[1]);
            if (!account) return error(404, `No such account: '${accountPath[1]}'`);
            return {
              status: 200,
              body: {
                ...account,
                object: "account",
                requirements: account.payouts_enabled
                  ? { currently_due: [], disabled_reason: null }
                  : { currently_due: ["external_account"], disabled_reason: "requirements.past_due" },
              },
            };
          }
          if (post && path === "/v1/account_links") {
            const account = form.get("account") ?? "";
            if (!connect.accounts.has(account)) return error(400, `No such account: '${account}'`);
            if (
              form.get("type") !== "account_onboarding" ||
              !form.get("return_url") ||
              !form.get("refresh_url")
            )
              return error(400, "type, return_url and refresh_url are required");
            return {
              status: 200,
              body: {
                object: "account_link",
                url: `https://connect.stripe.com/setup/e/${account}/link${++counter}`,
                created: Math.floor(Date.now() / 1000),
                expires_at: Math.floor(Date.now() / 1000) + 300,
              },
            };
          }
          if (post && path === "/v1/transfers") {
            const destination = form.get("destination") ?? "";
            if (!connect.accounts.has(destination))
              return error(400, `No such destination: '${destination}'`);
            const transfer = {
              id: `tr_${++counter}`,
              amount: Number(form.get("amount")),
              destination,
              metadata: metadataOf(),
            };
            connect.transfers.set(transfer.id, transfer);
            return {
              status: 200,
              body: {
                ...transfer,
                object: "transfer",
                currency: form.get("currency"),
                amount_reversed: 0,
                reversed: false,
              },
            };
          }
          const reversal = /^\/v1\/transfers\/(tr_\w+)\/reversals$/.exec(path);
          if (post && reversal?.[1]) {
            if (!connect.transfers.has(reversal[1])) return error(404, `No such transfer: '${reversal[1]}'`);
            const made = { id: `trr_${++counter}`, transfer: reversal[1] };
            connect.reversals.set(made.id, made);
            return { status: 200, body: { ...made, object: "transfer_reversal" } };
          }
          if (post && path === "/v1/payouts") {
            const account = req.headers["stripe-account"];
            if (typeof account !== "string" || !connect.accounts.has(account))
              return error(400, "Payouts to a connected account need its Stripe-Account header");
            const balance =
              [...connect.transfers.values()]
                .filter((t) => t.destination === account)
                .reduce((sum, t) => sum + t.amount, 0) -
              [...connect.payouts.values()]
                .filter((p) => p.account === account)
                .reduce((sum, p) => sum + p.amount, 0);
            const amount = Number(form.get("amount"));
            if (amount > balance) return error(400, "You have insufficient funds in your Stripe account.");
            const payout = { id: `po_${++counter}`, amount, account, metadata: metadataOf() };
            connect.payouts.set(payout.id, payout);
            return {
              status: 200,
              body: { ...payout, object: "payout", currency: form.get("currency"), status: "pending" },
            };
          }
          return error(404, `Unrecognized request URL (${req.method}: ${path})`);
        };
        const outcome = act();
        if (replayKey) answered.set(replayKey, outcome);
        if (fault === "lose-answer") {
          res.writeHead(500, { "content-type": "application/json", "stripe-should-retry": "false" });
          return res.end(
            JSON.stringify({ error: { type: "api_error", message: "An unknown error occurred" } }),
          );
        }
        return json(outcome.status, outcome.body);
      }
      if (post && path === "/v1/customers") {
        const customerId = `cus_${++counter}`;
        firstCustomer ??= customerId;
        return json(200, { id: customerId, object: "customer", email: form.get("email"), metadata: {} });
      }
      if (post && path === "/v1/payment_intents") {
        const id = `pi_${++counter}`;
        return json(200, {
          id,
          object: "payment_intent",
          amount: Number(form.get("amount")),
          currency: form.get("currency"),
          customer: form.get("customer"),
          client_secret: `${id}_secret_abc`,
          status: "requires_payment_method",
          metadata: {},
        });
      }
      if (post && path === "/v1/setup_intents") {
        const id = `seti_${++counter}`;
        setupCustomers.set(id, form.get("customer") ?? "");
        return json(200, {
          id,
          object: "setup_intent",
          client_secret: `${id}_secret_abc`,
          status: "requires_payment_method",
          customer: form.get("customer"),
        });
      }
      const ownerOf = (card: string) => (card === "pm_mine" ? firstCustomer : cardOwners.get(card));
      const method = /^\/v1\/payment_methods\/(pm_\w+)$/.exec(path);
      if (req.method === "GET" && method?.[1]) {
        return json(200, {
          id: method[1],
          object: "payment_method",
          customer: ownerOf(method[1]) ?? "cus_someone_else",
          card: { brand: "visa", last4: "4242", exp_month: 8, exp_year: 2031 },
        });
      }
      if (post && path === "/v1/products")
        return json(200, { id: `prod_${++counter}`, object: "product", name: form.get("name") });
      if (post && path === "/v1/subscriptions") {
        const card = form.get("default_payment_method") ?? "";
        if (ownerOf(card) !== form.get("customer"))
          return json(400, {
            error: {
              type: "invalid_request_error",
              message: `The customer does not have a payment method ${card}`,
            },
          });
        if (card === DECLINED_CARD)
          return json(402, {
            error: { type: "card_error", code: "card_declined", message: "Your card was declined." },
          });
        const created = {
          id: `sub_${++counter}`,
          object: "subscription",
          customer: form.get("customer"),
          status: "active",
          cancel_at_period_end: false,
          metadata: Object.fromEntries(
            [...form]
              .filter(([key]) => key.startsWith("metadata["))
              .map(([key, value]) => [key.slice(9, -1), value]),
          ),
        };
        void (fake.beforeSubscriptionAnswer?.(created) ?? Promise.resolve()).then((outcome) => {
          if (outcome !== "lose-answer") return json(200, created);
          res.writeHead(500, { "content-type": "application/json", "stripe-should-retry": "false" });
          res.end(JSON.stringify({ error: { type: "api_error", message: "An unknown error occurred" } }));
        });
        return;
      }
      const subscription = /^\/v1\/subscriptions\/(sub_\d+)$/.exec(path);
      if (post && subscription)
        return json(200, {
          id: subscription[1],
          object: "subscription",
          status: "active",
          cancel_at_period_end: form.get("cancel_at_period_end") === "true",
        });
      json(404, {
        error: {
          type: "invalid_request_error",
          message: `Unrecognized request URL (${req.method}: ${path})`,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  return fake;
}

const signer = new Stripe("sk_test_unused");
export const WEBHOOK_SECRET = "whsec_test_secret_0123456789";
const SECRET_KEY = "sk_test_promptmint_123";

export interface StripeTestServer {
  fake: FakeStripe;
  server: TestServer;
  /** Posts an event to the server's webhook, signed like Stripe signs it (with WEBHOOK_SECRET unless told). */
  deliver(
    event: object,
    options?: { secret?: string; timestamp?: number },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/** The real server on its own test database, with Stripe configured and pointed at a fresh fake. */
export async function startStripeTestServer(env: Record<string, string> = {}): Promise<StripeTestServer> {
  const fake = await startFakeStripe(SECRET_KEY);
  const testDb = await createTestDatabase();
  const server = await startTestServer(testDb, {
    env: {
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_PUBLISHABLE_KEY: "pk_test_promptmint",
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: fake.url,
      GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
      ...env,
    },
  });
  return {
    fake,
    server,
    deliver: (event, options = {}) =>
      deliverWebhook(server.baseUrl, event, { secret: options.secret ?? WEBHOOK_SECRET, ...options }),
    async stop() {
      await server.stop();
      await testDb.destroy();
      await fake.close();
    },
  };
}

async function deliverWebhook(
  baseUrl: string,
  event: object,
  options: { secret: string; timestamp?: number },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(event);
  const header = signer.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret,
    timestamp: options.timestamp,
  });
  const response = await fetch(`${baseUrl}/api/billing/stripe/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": header },
    body: payload,
  });
  return { status: response.status, body: await response.json() };
}
