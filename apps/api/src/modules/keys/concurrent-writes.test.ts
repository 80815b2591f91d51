import { describe, expect, it } from "vitest";
import { type Caller, callOn, createCaller } from "../../test/caller.ts";
import { useTestServers } from "../../test/use-test-server.ts";

// Issue 16 item 10: concurrent writes of one user answer 2xx or a clear 409, and per-user limits
// hold. On PostgreSQL the requests are spread over two servers on one database.

const { urls } = useTestServers();

/** `count` requests at once, sent to the servers in turn. */
const all = (
  caller: Caller,
  count: number,
  method: string,
  path: (i: number) => string,
  body: (i: number) => unknown,
) =>
  Promise.all(
    Array.from({ length: count }, (_, i) =>
      callOn(caller, urls[i % urls.length] ?? "", method, path(i), body(i)),
    ),
  );

describe("concurrent writes", () => {
  it("never passes the 50-key cap, whatever arrives at once", async () => {
    const user = await createCaller(urls[0] ?? "");
    const answers = await all(
      user,
      80,
      "POST",
      () => "/api/keys/",
      (i) => ({ name: `key ${i}` }),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(50);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.every((a) => a.status === 409)).toBe(true);
    expect(refused[0]?.body.message).toBe("You already have 50 active keys; revoke one first");
    expect((await user.api("GET", "/api/keys/")).body).toHaveLength(50);
  });

  it("saves a prompt 10 times at once as 10 consecutive versions", async () => {
    const owner = await createCaller(urls[0] ?? "");
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Busy Prompt" } });
    const answers = await all(
      owner,
      10,
      "PATCH",
      () => `/api/app/${app.slug}/prompt/`,
      (i) => ({ prompt_template: `Variant ${i}: {{query}}` }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const versions = await owner.api("GET", `/api/prompts/${answers[0]?.body.id}/versions/`);
    expect(versions.body.map((v: { version: number }) => v.version)).toEqual([
      11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
    ]);
  });

  it("keeps exactly one default card when cards are added at once", async () => {
    const owner = await createCaller(urls[0] ?? "");
    const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Card Holder" } });
    const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };
    const address = { name: "Ada", line1: "1 Way", city: "London", postal_code: "N1 9GU", country: "GB" };
    const answers = await all(
      owner,
      8,
      "POST",
      () => `/api/app/${app.slug}/payment-methods/`,
      () => ({ card, billing_address: address }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    const cards = (await owner.api("GET", `/api/app/${app.slug}/payment-methods/`)).body;
    expect(cards.filter((c: { is_default: boolean }) => c.is_default)).toHaveLength(1);
  });
});
