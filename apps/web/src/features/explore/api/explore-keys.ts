/** Every Explore query starts with this key. */
export const exploreQueryKey = ["explore"] as const;
