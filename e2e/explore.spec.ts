import { expect, test } from "@playwright/test";
import { completeSignUp, createLiveApp, newPerson, signUp, topUpFromZero } from "./fixtures.ts";

test("a visitor finds a public app in Explore, signs up from its page, tops up and tries it", async ({
  page,
  browser,
}) => {
  // A creator publishes a public prompt app (the starter template, answered by the sandbox model).
  const creator = newPerson();
  await signUp(page, creator);
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Echo Explorer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, {
    name,
    description: "Answers whatever you ask, in the sandbox.",
    priceCents: 10,
  });

  // A signed-out visitor, in a browser of their own, browses Explore.
  const visitorContext = await browser.newContext({ baseURL: test.info().project.use.baseURL });
  const visitor = await visitorContext.newPage();
  await visitor.goto("/");
  await visitor.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Explore" }).click();
  await expect(visitor.getByRole("heading", { name: "Explore apps" })).toBeVisible();
  const search = visitor.getByRole("searchbox", { name: "Search" });
  await search.fill(name);
  await search.press("Enter");
  const card = visitor.getByRole("list", { name: "Apps" }).getByRole("listitem");
  await expect(card).toHaveCount(1);
  await expect(card).toContainText(`by ${creator.displayName}`);
  await expect(card).toContainText("$0.10 / call");
  await card.getByRole("link", { name }).click();

  // The app page: samples to copy, and an invitation to sign up that comes back here.
  await expect(visitor).toHaveURL(new RegExp(`/explore/${slug}$`));
  await expect(visitor.getByRole("heading", { name, level: 1 })).toBeVisible();
  await expect(visitor.getByRole("tabpanel")).toContainText(`/api/app/${slug}/completion-messages`);
  await visitor.getByRole("link", { name: "Sign up" }).click();
  await completeSignUp(visitor, newPerson());
  await expect(visitor).toHaveURL(new RegExp(`/explore/${slug}$`));

  // Trying it with an empty wallet asks for a top-up.
  await visitor.getByLabel("What to ask *").fill("How do I brew oolong?");
  await visitor.getByRole("button", { name: "Run ($0.10)" }).click();
  const topUpNotice = visitor.getByRole("alert").filter({ hasText: "Your wallet needs a top-up" });
  await expect(topUpNotice).toBeVisible();
  await topUpNotice.getByRole("link", { name: "Top up wallet" }).click();

  // The sandbox top-up with the good test card.
  await expect(visitor).toHaveURL(/\/wallet$/);
  await topUpFromZero(visitor, 10);

  // Back on the app page the call runs, is answered and is paid from the wallet.
  await visitor.goBack();
  await expect(visitor).toHaveURL(new RegExp(`/explore/${slug}$`));
  await visitor.getByLabel("What to ask *").fill("How do I brew oolong?");
  await visitor.getByRole("button", { name: "Run ($0.10)" }).click();
  const answer = visitor.getByRole("region", { name: "Answer" });
  await expect(answer).toContainText("How do I brew oolong?");
  await expect(answer.getByLabel("Token usage")).toContainText("Total Tokens");
  await visitor.goto("/wallet");
  await expect(visitor.getByRole("region", { name: "Balances" })).toContainText("$9.90");

  // Having paid for a call, the visitor may rate the app (decision 081); the health card counts
  // the one call and waits for more before showing figures.
  await visitor.goto(`/explore/${slug}`);
  await expect(
    visitor.getByText("Not enough calls yet: figures appear after 10 calls in 30 days (1 so far)."),
  ).toBeVisible();
  const reviews = visitor.getByRole("region", { name: "Reviews" });
  await expect(reviews.getByRole("heading", { name: "No reviews yet" })).toBeVisible();
  await reviews.getByRole("button", { name: "Write a review" }).click();
  await reviews.getByRole("radio", { name: "5 stars: Excellent" }).check();
  await reviews.getByLabel("Review (optional)").fill("Brewed a fine oolong.");
  await reviews.getByRole("button", { name: "Post review" }).click();
  await expect(reviews.getByRole("region", { name: "Your review" })).toContainText("Brewed a fine oolong.");

  // The rating is on the app's card in Explore.
  await visitor.goto(`/explore?q=${encodeURIComponent(name)}`);
  await expect(card.getByRole("img", { name: "Rated 5.0 out of 5 from 1 review" })).toBeVisible();
  await visitorContext.close();
});
