/** The contract's longest explicit slug. */
const MAX_SLUG_LENGTH = 60;

/**
 * SPEC §2: the builder's slug from the name: lowercase, runs of non-alphanumerics become one
 * hyphen, leading and trailing hyphens trimmed.
 */
export function slugFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/g, "");
}
