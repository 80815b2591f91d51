import type { ExploreQuery } from "@promptmint/contracts";
import type { SelectOption } from "../../components/ui/select-field";

export const TYPE_FILTERS: readonly SelectOption[] = [
  { value: "", label: "All types" },
  { value: "prompt", label: "Prompt" },
  { value: "workflow", label: "Workflow" },
];

export const MODE_FILTERS: readonly SelectOption[] = [
  { value: "", label: "All modes" },
  { value: "completion", label: "Completion" },
  { value: "chat", label: "Chat" },
];

/** Price ranges per call, in cents: `min-max`, either side may be open. */
export const PRICE_FILTERS: readonly SelectOption[] = [
  { value: "", label: "Any price" },
  { value: "-5", label: "Up to $0.05" },
  { value: "-25", label: "Up to $0.25" },
  { value: "-100", label: "Up to $1.00" },
  { value: "101-", label: "Over $1.00" },
];

/** Explore's orders (docs/decisions/081); the first is the API's default and is not put in the address. */
export const SORT_OPTIONS: readonly SelectOption[] = [
  { value: "", label: "Recommended" },
  { value: "top_rated", label: "Top rated" },
  { value: "most_used", label: "Most used" },
  { value: "newest", label: "Newest" },
  { value: "price", label: "Price: lowest first" },
];

/** The filters kept in the address (`?q=&type=&mode=&price=&sort=&page=`), so a search can be shared. */
export const FILTER_PARAMS = ["q", "type", "mode", "price", "sort", "page"] as const;

function priceBounds(range: string): Pick<ExploreQuery, "min_price_cents" | "max_price_cents"> {
  const known = PRICE_FILTERS.some((option) => option.value === range && range !== "");
  if (!known) return {};
  const [min, max] = range.split("-");
  return {
    ...(min ? { min_price_cents: Number(min) } : {}),
    ...(max ? { max_price_cents: Number(max) } : {}),
  };
}

const oneOf = (value: string | null, options: readonly SelectOption[]) =>
  options.some((option) => option.value === value && value !== "") ? (value as string) : undefined;

/** The API query for the address's filters; unknown values are dropped rather than sent. */
export function exploreQueryOf(params: URLSearchParams): ExploreQuery {
  const page = Number(params.get("page"));
  return {
    q: params.get("q")?.trim() || undefined,
    type: oneOf(params.get("type"), TYPE_FILTERS) as ExploreQuery["type"],
    mode: oneOf(params.get("mode"), MODE_FILTERS) as ExploreQuery["mode"],
    ...priceBounds(params.get("price") ?? ""),
    sort: oneOf(params.get("sort"), SORT_OPTIONS) as ExploreQuery["sort"],
    ...(Number.isInteger(page) && page > 1 ? { page } : {}),
  };
}
