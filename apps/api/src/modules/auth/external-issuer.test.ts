import { decodeJwt } from "jose";
import { expect, it } from "vitest";
import { callerAt } from "../../test/caller.ts";
import { verifyEmailThroughOutbox } from "../../test/mail.ts";
import { signIn, signUp, uniqueEmail } from "../../test/oidc-client.ts";
import { useTestServer, withTestServer } from "../../test/use-test-server.ts";

// The "external" issuer is a real oidc-provider: another Promptmint's embedded issuer.
const OPERATOR = uniqueEmail("external-operator");
const issuer = useTestServer();
const api = useTestServer(() => ({
  env: {
    OIDC_ISSUER: issuer.config.oidc.issuer ?? "",
    OIDC_CLIENT_ID: "promptmint-web",
    OIDC_AUDIENCE: issuer.config.oidc.audience,
    ADMIN_EMAILS: OPERATOR,
  },
}));

it("accepts tokens of an external issuer set by OIDC_ISSUER, verified through its published key set", async () => {
  const config = await (await fetch(`${api.baseUrl}/api/config`)).json();
  expect(config.oidc).toMatchObject({
    issuer: issuer.config.oidc.issuer,
    client_id: "promptmint-web",
    embedded: false,
  });
  expect((await fetch(`${api.baseUrl}/oidc/.well-known/openid-configuration`)).status).toBe(404);

  const person = await signUp(issuer.baseUrl, { displayName: "External Person" });
  const login = await fetch(`${api.baseUrl}/api/auth/register/`, {
    method: "POST",
    headers: { authorization: `Bearer ${person.access_token}` },
  });
  expect(login.status).toBe(200);
  const profile = await login.json();
  expect(profile.user).toMatchObject({ email: person.email, display_name: "External Person" });
  expect(profile.creator).not.toBeNull();
});

it("reads email_verified from the external issuer: an ADMIN_EMAILS address it calls unverified gets no operator rights", async () => {
  const person = await signUp(issuer.baseUrl, { email: OPERATOR, displayName: "Claimant" });
  expect(decodeJwt(person.access_token).email_verified).toBe(false);
  const claimant = callerAt(api.baseUrl, { email: OPERATOR, token: person.access_token });
  const registered = await claimant.api("POST", "/api/auth/register/");
  expect(registered.body.user).toMatchObject({ email: OPERATOR, email_verified: false });
  const refused = await claimant.api("GET", "/api/admin/access");
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe("email_unverified");
  // The external issuer verifies addresses itself: this server has no link to send.
  expect((await claimant.api("POST", "/api/auth/verification-email/")).status).toBe(409);

  // Once the issuer says the address is verified (its own mailed link), the next sign-in grants the role.
  await verifyEmailThroughOutbox(issuer.baseUrl, OPERATOR);
  const again = await signIn(issuer.baseUrl, OPERATOR, person.password);
  expect(decodeJwt(again.access_token).email_verified).toBe(true);
  const verified = callerAt(api.baseUrl, { email: OPERATOR, token: again.access_token });
  expect((await verified.api("POST", "/api/auth/login/")).body.user.email_verified).toBe(true);
  expect((await verified.api("GET", "/api/admin/access")).status).toBe(200);
});

it("refuses tokens whose audience is not OIDC_AUDIENCE", async () => {
  await withTestServer(
    {
      env: {
        OIDC_ISSUER: issuer.config.oidc.issuer ?? "",
        OIDC_CLIENT_ID: "promptmint-web",
        OIDC_AUDIENCE: "https://another-api.example",
      },
    },
    async (other) => {
      const person = await signUp(issuer.baseUrl);
      const response = await fetch(`${other.baseUrl}/api/auth/login/`, {
        method: "POST",
        headers: { authorization: `Bearer ${person.access_token}` },
      });
      expect(response.status).toBe(401);
      expect((await response.json()).message).toBe("Access token is not meant for this API");
    },
  );
});
