import { EXPLORE_PAGE_SIZE } from "@promptmint/contracts";
import { ChevronLeft, ChevronRight, Search, SearchX } from "lucide-react";
import { type FormEvent, useEffect, useState } from "react";
import { useSearchParams } from "react-router";
import { Button } from "../../components/ui/button";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SelectField, type SelectOption } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";
import { useExploreApps } from "./api/list-explore-apps";
import { ExploreAppCard } from "./explore-app-card";
import { exploreQueryOf, MODE_FILTERS, PRICE_FILTERS, SORT_OPTIONS, TYPE_FILTERS } from "./explore-filters";

/** /explore: the live public apps, for everyone. */
export function ExplorePage() {
  const [params, setParams] = useSearchParams();
  const query = exploreQueryOf(params);
  const apps = useExploreApps(query);
  const [search, setSearch] = useState(query.q ?? "");
  const filtered = [...params.keys()].some((name) => name !== "page" && name !== "sort");

  useEffect(() => setSearch(params.get("q") ?? ""), [params]);

  /** Changes one filter and goes back to the first page. */
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete("page");
    setParams(next, { preventScrollReset: true });
  };
  const submitSearch = (event: FormEvent) => {
    event.preventDefault();
    setFilter("q", search.trim());
  };
  const resetFilters = () => setParams(new URLSearchParams(), { preventScrollReset: true });
  const goToPage = (page: number) => {
    const next = new URLSearchParams(params);
    if (page > 1) next.set("page", String(page));
    else next.delete("page");
    // Another page of results opens at its top, like a new screen (RootLayout).
    setParams(next);
  };

  const filter = (name: string, label: string, options: readonly SelectOption[], className?: string) => (
    <SelectField
      label={label}
      className={className}
      options={options}
      value={params.get(name) ?? ""}
      onChange={(event) => setFilter(name, event.target.value)}
    />
  );

  const lastPage = Math.max(1, Math.ceil((apps.data?.total ?? 0) / EXPLORE_PAGE_SIZE));

  return (
    <PageContainer>
      <PageHeader
        title="Explore apps"
        description="AI apps published by creators on Promptmint. Try one here or call it from your code with an API key."
      />
      <div className="mb-6 grid gap-3 lg:grid-cols-[minmax(0,2fr)_repeat(4,minmax(0,1fr))] lg:items-end">
        <form aria-label="Search apps" onSubmit={submitSearch} className="flex items-end gap-2">
          <TextField
            label="Search"
            type="search"
            className="flex-1"
            placeholder="Name or description"
            value={search}
            maxLength={100}
            onChange={(event) => setSearch(event.target.value)}
          />
          <Button type="submit" variant="secondary" aria-label="Search apps">
            <Search className="size-4" aria-hidden="true" />
          </Button>
        </form>
        <div className="grid grid-cols-2 gap-3 sm:grid-cols-4 lg:contents">
          {filter("type", "Type", TYPE_FILTERS)}
          {filter("mode", "Mode", MODE_FILTERS)}
          {filter("price", "Price per call", PRICE_FILTERS)}
          {filter("sort", "Sort by", SORT_OPTIONS)}
        </div>
      </div>

      {apps.isPending ? (
        <LoadingState label="Loading apps..." />
      ) : apps.isError ? (
        <ErrorBox message={getErrorMessage(apps.error)} />
      ) : apps.data.data.length === 0 ? (
        <EmptyState
          icon={SearchX}
          title="No apps found"
          description={
            filtered
              ? "No live app matches this search. Try other words or fewer filters."
              : "No creator has published an app yet."
          }
          action={
            filtered && (
              <Button variant="secondary" onClick={resetFilters}>
                Reset filters
              </Button>
            )
          }
        />
      ) : (
        <>
          <p className="mb-3 text-sm text-slate-500" aria-live="polite">
            {apps.data.total === 1 ? "1 app" : `${apps.data.total} apps`}
          </p>
          <ul
            aria-label="Apps"
            aria-busy={apps.isPlaceholderData}
            className={cn(
              "grid gap-4 transition-opacity sm:grid-cols-2 lg:grid-cols-3",
              apps.isPlaceholderData && "opacity-60",
            )}
          >
            {apps.data.data.map((app) => (
              <li key={app.slug}>
                <ExploreAppCard app={app} />
              </li>
            ))}
          </ul>
          {lastPage > 1 && (
            <nav aria-label="Pages" className="mt-8 flex items-center justify-center gap-3">
              <Button
                variant="secondary"
                size="sm"
                disabled={apps.data.page <= 1}
                onClick={() => goToPage(apps.data.page - 1)}
              >
                <ChevronLeft className="size-4" aria-hidden="true" />
                Previous
              </Button>
              <span className="text-sm text-slate-600 tabular-nums">
                Page {apps.data.page} of {lastPage}
              </span>
              <Button
                variant="secondary"
                size="sm"
                disabled={!apps.data.has_more}
                onClick={() => goToPage(apps.data.page + 1)}
              >
                Next
                <ChevronRight className="size-4" aria-hidden="true" />
              </Button>
            </nav>
          )}
        </>
      )}
    </PageContainer>
  );
}
