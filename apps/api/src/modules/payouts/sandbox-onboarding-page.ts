/**
 * The sandbox Connect's onboarding page (what Stripe's hosted onboarding is in test mode): a
 * clearly labelled form choosing a test bank account whose payouts succeed or fail. Served by the
 * API behind a single-use link; no script, so the page's CSP holds.
 */
export function sandboxOnboardingPage(options: { expired: boolean; returnUrl: string }): string {
  const body = options.expired
    ? `<h1>This onboarding link has expired</h1>
       <p>Onboarding links work once and for 30 minutes. Start again from your Earnings page.</p>
       <p><a href="${escapeHtml(options.returnUrl)}">Back to Earnings</a></p>`
    : `<h1>Set up payouts (sandbox)</h1>
       <p class="banner">Sandbox payouts — no real money moves. Stripe Connect asks for your identity and bank details here.</p>
       <form method="post">
         <fieldset>
           <legend>Test bank account</legend>
           <label><input type="radio" name="bank" value="succeeds" checked> Test bank account: succeeds payouts</label>
           <label><input type="radio" name="bank" value="fails"> Test bank account: fails payouts</label>
         </fieldset>
         <button type="submit">Continue</button>
       </form>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Promptmint payouts — sandbox onboarding</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 2rem auto; padding: 0 1rem; color: #111827; }
  .banner { background: #fef3c7; border: 1px solid #f59e0b; padding: .5rem .75rem; border-radius: .375rem; }
  fieldset { border: 1px solid #d1d5db; border-radius: .375rem; padding: .75rem; margin: 1rem 0; }
  label { display: block; padding: .375rem 0; }
  button { background: #4f46e5; color: #fff; border: 0; border-radius: .375rem; padding: .625rem 1.25rem; font-size: 1rem; }
</style>
</head>
<body>
${body}
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
