import { useRuntimeConfig } from "../../lib/runtime-config";
import {
  SANDBOX_PAYMENTS_NOTICE,
  SANDBOX_TEST_CARDS,
  STRIPE_NOT_CONFIGURED,
} from "../../lib/sandbox-payments";
import { Alert } from "./alert";

/**
 * Above every payment form: the sandbox banner with its test cards; nothing when the host runs
 * Stripe; SPEC's warning when it runs neither (no publishable key).
 */
export function PaymentGatewayNotice({ className }: { className?: string }) {
  const config = useRuntimeConfig();
  if (!config.sandbox.payments && config.stripe_publishable_key) return null;
  if (!config.sandbox.payments) {
    return (
      <Alert tone="warning" role="alert" className={className}>
        {STRIPE_NOT_CONFIGURED}
      </Alert>
    );
  }
  return (
    <Alert tone="info" role="note" title={SANDBOX_PAYMENTS_NOTICE} className={className}>
      <p className="text-xs">
        Test cards:{" "}
        {SANDBOX_TEST_CARDS.map((card, index) => (
          <span key={card.number}>
            {index > 0 && ", "}
            <span className="font-mono whitespace-nowrap">{card.number}</span> {card.outcome}
          </span>
        ))}
        . Any future expiry date and any CVC.
      </p>
    </Alert>
  );
}

/** Payments can be taken through the sandbox processor, or Stripe when its publishable key is set. */
export function usePaymentsReady(): boolean {
  const config = useRuntimeConfig();
  return config.sandbox.payments || Boolean(config.stripe_publishable_key);
}
