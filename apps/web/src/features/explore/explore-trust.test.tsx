import type { Review } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { exploreAppDetailFixture, exploreAppFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/explore/apps/haiku-writer";
const REVIEWS = "GET /api/explore/apps/haiku-writer/reviews";
const MINE = "GET /api/explore/apps/haiku-writer/reviews/mine";
const PUT_MINE = "PUT /api/explore/apps/haiku-writer/reviews/mine";
const NOT_A_BUYER = "Only buyers who have paid for this app can review it";

const review = (overrides: Partial<Review> = {}): Review => ({
  id: "r-1",
  rating: 4,
  body: "Lovely syllables.",
  author_name: "Grace",
  created_at: "2026-11-01T12:00:00.000Z",
  updated_at: "2026-11-01T12:00:00.000Z",
  reply: null,
  replied_at: null,
  ...overrides,
});
const reviewList = (data: Review[], average: number | null = null) =>
  jsonResponse({
    data,
    page: 1,
    page_size: 20,
    total: data.length,
    has_more: false,
    rating: { average, count: data.length },
  });
const cantReview = () =>
  jsonResponse({ review: null, can_review: false, reason: NOT_A_BUYER, can_reply: false });

describe("trust on Explore (decision 081)", () => {
  it("shows each card's stars, review count and measured health, or that there is not enough yet", async () => {
    const quiet = exploreAppFixture({
      name: "Quiet App",
      slug: "quiet-app",
      rating: { average: null, count: 0 },
      health: { calls_30d: 3, enough_calls: false, uptime: null, error_rate: null, median_latency_ms: null },
    });
    stubFetch({
      "GET /api/explore/apps": () =>
        jsonResponse({
          data: [exploreAppFixture(), quiet],
          page: 1,
          page_size: 24,
          total: 2,
          has_more: false,
        }),
    });
    renderRoute("/explore");

    const haiku = within(
      (await screen.findByRole("link", { name: "Haiku Writer" })).closest("li") as HTMLElement,
    );
    expect(haiku.getByRole("img", { name: "Rated 4.5 out of 5 from 12 reviews" })).toBeDefined();
    expect(haiku.getByText("99.6% uptime · 840 ms median")).toBeDefined();
    const card = within(screen.getByRole("link", { name: "Quiet App" }).closest("li") as HTMLElement);
    expect(card.getByText("No reviews yet")).toBeDefined();
    expect(card.getByText("Not enough calls yet")).toBeDefined();
  });

  it("sorts through the API with the Sort by control, keeping it in the address", async () => {
    const page = () =>
      jsonResponse({ data: [exploreAppFixture()], page: 1, page_size: 24, total: 1, has_more: false });
    const api = stubFetch({ "GET /api/explore/apps": page, "GET /api/explore/apps?sort=top_rated": page });
    const { router } = renderRoute("/explore");
    await screen.findByRole("link", { name: "Haiku Writer" });
    expect((screen.getByLabelText("Sort by") as HTMLSelectElement).value).toBe("");

    await userEvent.selectOptions(screen.getByLabelText("Sort by"), "Top rated");
    await waitFor(() => expect(api.callsTo("GET /api/explore/apps?sort=top_rated")).toHaveLength(1));
    expect(router.state.location.search).toBe("?sort=top_rated");
    // Sorting filters nothing: no "Reset filters" on an empty page, as a search would offer.
    expect(screen.queryByRole("button", { name: "Reset filters" })).toBeNull();
  });

  it("shows the app's health figures and its reviews with the creator's reply", async () => {
    stubFetch({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [REVIEWS]: () =>
        reviewList(
          [review(), review({ id: "r-2", rating: 5, author_name: "Alan", body: "", reply: "Thanks, Alan!" })],
          4.5,
        ),
    });
    renderRoute("/explore/haiku-writer");

    const health = (await screen.findByRole("heading", { name: "Health" })).closest(
      "div.rounded-xl",
    ) as HTMLElement;
    const figure = (label: string) => within(health).getByText(label).nextElementSibling?.textContent;
    expect(figure("Uptime")).toBe("99.6%");
    expect(figure("Median latency")).toBe("840 ms");
    expect(figure("Error rate")).toBe("1.2%");
    expect(figure("Calls")).toBe("1,250");

    const list = await screen.findByRole("list", { name: "Reviews" });
    const items = within(list).getAllByRole("listitem");
    expect(within(items[0] as HTMLElement).getByRole("img", { name: "4 out of 5 stars" })).toBeDefined();
    expect(within(items[0] as HTMLElement).getByText("Lovely syllables.")).toBeDefined();
    expect(within(items[1] as HTMLElement).getByText("Reply from the creator")).toBeDefined();
    expect(within(items[1] as HTMLElement).getByText("Thanks, Alan!")).toBeDefined();
    // A visitor is asked to sign in; nobody is offered a form they would be refused.
    expect(screen.getByText(/to rate and review it/)).toBeDefined();
    expect(screen.queryByRole("button", { name: "Write a review" })).toBeNull();
  });

  it("says when there are no reviews and not enough calls for health figures", async () => {
    stubFetch({
      [DETAIL]: () =>
        jsonResponse(
          exploreAppDetailFixture({
            rating: { average: null, count: 0 },
            health: {
              calls_30d: 4,
              enough_calls: false,
              uptime: null,
              error_rate: null,
              median_latency_ms: null,
            },
          }),
        ),
      [REVIEWS]: () => reviewList([]),
    });
    renderRoute("/explore/haiku-writer");
    expect(
      await screen.findByText("Not enough calls yet: figures appear after 10 calls in 30 days (4 so far)."),
    ).toBeDefined();
    expect(await screen.findByRole("heading", { name: "No reviews yet" })).toBeDefined();
  });

  it("tells a signed-in person who has not paid why they cannot review", async () => {
    stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [REVIEWS]: () => reviewList([]),
      [MINE]: cantReview,
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });
    expect(await screen.findByText(`${NOT_A_BUYER}.`)).toBeDefined();
    expect(screen.queryByRole("button", { name: "Write a review" })).toBeNull();
  });

  it("lets a buyer rate with the keyboard and post a review, then shows it as theirs", async () => {
    let posted: Review | null = null;
    const api = stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [REVIEWS]: () => reviewList(posted ? [posted] : [], posted ? posted.rating : null),
      [MINE]: () => jsonResponse({ review: posted, can_review: true, reason: null, can_reply: false }),
      [PUT_MINE]: (request) => {
        const body = request.body as { rating: number; body: string };
        posted = review({ id: "mine", author_name: "Test User", rating: body.rating, body: body.body });
        return jsonResponse(posted);
      },
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.click(await screen.findByRole("button", { name: "Write a review" }));
    const form = screen.getByRole("form", { name: "Write a review" });
    // Posting without a rating is refused on the page, naming what is missing.
    await userEvent.click(within(form).getByRole("button", { name: "Post review" }));
    expect(within(form).getByText("Choose a rating from 1 to 5 stars")).toBeDefined();
    expect(api.callsTo(PUT_MINE)).toHaveLength(0);

    // A radio group: focus the first star, then the arrow keys move the choice.
    within(form).getByRole("radio", { name: "1 star: Poor" }).focus();
    await userEvent.keyboard("{ArrowRight}{ArrowRight}{ArrowRight}");
    expect(
      (within(form).getByRole("radio", { name: "4 stars: Very good" }) as HTMLInputElement).checked,
    ).toBe(true);
    await userEvent.type(within(form).getByLabelText("Review (optional)"), "Good haiku.");
    await userEvent.click(within(form).getByRole("button", { name: "Post review" }));

    await waitFor(() => expect(api.callsTo(PUT_MINE)[0]?.body).toEqual({ rating: 4, body: "Good haiku." }));
    const own = await screen.findByRole("region", { name: "Your review" });
    expect(within(own).getByText("Good haiku.")).toBeDefined();
    expect(within(own).getByRole("button", { name: "Edit" })).toBeDefined();
    expect(screen.queryByRole("button", { name: "Write a review" })).toBeNull();
    // Once, as theirs: not again in the list below (nor the list's "No reviews yet").
    await waitFor(() => expect(screen.getAllByText("Good haiku.")).toHaveLength(1));
    expect(screen.queryByRole("list", { name: "Reviews" })).toBeNull();
    expect(screen.queryByText("No reviews yet")).toBeNull();
  });

  it("lets the creator reply once to a review, under it", async () => {
    let replied: string | null = null;
    const REPLY = "PUT /api/explore/apps/haiku-writer/reviews/r-1/reply";
    const api = stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [REVIEWS]: () => reviewList([review({ reply: replied })], 4),
      [MINE]: () =>
        jsonResponse({
          review: null,
          can_review: false,
          reason: "Creators cannot review their own app",
          can_reply: true,
        }),
      [REPLY]: (request) => {
        replied = (request.body as { reply: string }).reply;
        return jsonResponse(review({ reply: replied, replied_at: "2026-11-02T12:00:00.000Z" }));
      },
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.click(await screen.findByRole("button", { name: "Reply" }));
    const form = screen.getByRole("form", { name: "Reply to Grace" });
    await userEvent.type(within(form).getByLabelText(/Your reply/), "Thank you, Grace!");
    await userEvent.click(within(form).getByRole("button", { name: "Post reply" }));

    await waitFor(() => expect(api.callsTo(REPLY)[0]?.body).toEqual({ reply: "Thank you, Grace!" }));
    expect(await screen.findByText("Thank you, Grace!")).toBeDefined();
    expect(screen.getByText("Reply from the creator")).toBeDefined();
    // Once: no second Reply button.
    expect(screen.queryByRole("button", { name: "Reply" })).toBeNull();
  });
});
