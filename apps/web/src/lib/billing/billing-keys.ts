/** Every billing query of one application starts with this key; a change invalidates below it. */
export function billingQueryKey(appSlug: string) {
  return ["billing", appSlug] as const;
}
