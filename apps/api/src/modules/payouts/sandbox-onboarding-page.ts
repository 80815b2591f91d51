import { escapeHtml } from "../../lib/html.ts";
import { pageShell } from "../../pages/page-shell.ts";

/**
 * The sandbox Connect's onboarding page (what Stripe's hosted onboarding is in test mode): a
 * clearly labelled form choosing a test bank account whose payouts succeed or fail, in the page
 * shell the sign-in pages use. Served by the API behind a single-use link; no script.
 */
export function sandboxOnboardingPage(options: { expired: boolean; returnUrl: string }): string {
  const back = `<p class="switch"><a href="${escapeHtml(options.returnUrl)}">Back to Earnings</a></p>`;
  const body = options.expired
    ? `<h1>This onboarding link has expired</h1>
<p class="lead">Onboarding links work once and for 30 minutes. Start again from your Earnings page.</p>
${back}`
    : `<h1>Set up payouts (sandbox)</h1>
<p class="lead">Stripe Connect asks for your identity and bank details here. In the sandbox, pick a test bank account instead.</p>
<p class="sandbox" role="note">Sandbox payouts — no real money moves.</p>
<form method="post">
  <fieldset>
    <legend>Test bank account</legend>
    <label class="choice"><input type="radio" name="bank" value="succeeds" checked><span>Test bank account: succeeds payouts<small>Withdrawals arrive as paid.</small></span></label>
    <label class="choice"><input type="radio" name="bank" value="fails"><span>Test bank account: fails payouts<small>Withdrawals fail and the money returns to your earnings.</small></span></label>
  </fieldset>
  <button type="submit" class="primary">Continue</button>
</form>
${back}`;
  return pageShell({
    title: options.expired ? "Onboarding link expired" : "Set up payouts",
    body,
    foot: "Payouts by Stripe Connect · sandbox",
  });
}
