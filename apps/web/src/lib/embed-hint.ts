import type { Visibility } from "@promptmint/contracts";

/** Under a Visibility select (prompt and workflow editors): where embedding is set up, and who pays. */
export function embedVisibilityHint(visibility: Visibility): string | undefined {
  return visibility === "embed"
    ? "Allowed sites and the widget snippet are on the application's page; widget calls are charged to your wallet."
    : undefined;
}
