import type { Package, PaymentMethod, PaymentResult, Subscription } from "@promptmint/contracts";
import { stubSignedInApi } from "./api-stubs";
import { createTestAuth } from "./auth-state";
import { walletFixture } from "./billing-fixtures";
import { jsonResponse, type RecordedRequest } from "./fetch-stub";
import { applicationFixture } from "./fixtures";
import { renderRoute } from "./render-route";

type Handler = (request: RecordedRequest) => Response | Promise<Response>;

export const APP = "/api/app/my-app";
export const CONFIRM = "POST /api/billing/sandbox/confirm/";

export interface BillingApiOptions {
  packages?: Package[];
  subscriptions?: Subscription[];
  paymentMethods?: PaymentMethod[];
  /** The viewer owns the app: `GET /app/my-app/` answers instead of 404. */
  owner?: boolean;
  /** What the sandbox says to a card; succeeded by default. */
  confirm?: Partial<PaymentResult>;
  extra?: Record<string, Handler>;
}

/** The billing API of `my-app` as a signed-in person sees it, keeping lists like the server. */
export function stubBillingApi(options: BillingApiOptions = {}) {
  const state = {
    packages: options.packages ?? [],
    subscriptions: options.subscriptions ?? [],
    paymentMethods: options.paymentMethods ?? [],
  };
  const api = stubSignedInApi({
    "GET /api/app/": () =>
      jsonResponse(options.owner ? [applicationFixture({ slug: "my-app", name: "My App" })] : []),
    [`GET ${APP}/`]: () =>
      options.owner
        ? jsonResponse(applicationFixture({ slug: "my-app", name: "My App" }))
        : jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    [`GET ${APP}/info`]: () =>
      jsonResponse({ name: "My App", description: "Answers questions.", tags: [], mode: "completion" }),
    [`GET ${APP}/packages/`]: () => jsonResponse(state.packages),
    [`GET ${APP}/subscriptions/`]: () => jsonResponse(state.subscriptions),
    [`GET ${APP}/payment-methods/`]: () => jsonResponse(state.paymentMethods),
    // The owner's free trial and promotion codes (decision 080; trial-and-codes.test.tsx tests them).
    [`GET ${APP}/trial/`]: () =>
      jsonResponse({
        trial_calls: 0,
        used: false,
        calls_left: null,
        trials_started: options.owner ? 0 : null,
      }),
    "GET /api/promotion-codes/": () => jsonResponse({ data: [] }),
    "GET /api/wallet/": () => jsonResponse(walletFixture()),
    [`POST ${APP}/create-payment-intent/`]: ({ body }) => {
      const amount = (body as { amount: number }).amount;
      return jsonResponse({
        id: "pi_sbx_1",
        client_secret: "pi_sbx_1_secret_abc",
        amount,
        currency: "usd",
        gateway: "sandbox",
      });
    },
    [CONFIRM]: () =>
      jsonResponse({
        status: "succeeded",
        message: "Payment succeeded",
        amount: 500,
        balance_micros: 10_000_000,
        ...options.confirm,
      }),
    ...options.extra,
  });
  return { ...api, state };
}

/** Renders /applications/my-app/billing, signed in, on the stubbed billing API. */
export function renderBillingPage(options: BillingApiOptions = {}) {
  const api = stubBillingApi(options);
  const view = renderRoute("/applications/my-app/billing", { auth: createTestAuth("signed-in") });
  return { ...view, api };
}
