import { useEffect } from "react";

/** The name every tab, history entry and bookmark ends with. */
const PRODUCT = "Promptmint";

/**
 * Names the browser tab after the screen (`Wallet · Promptmint`), so tabs, history and bookmarks
 * tell pages apart. Each screen's header calls it (PageHeader, ApplicationHeader, the sign-in
 * screens, the not-found and access-denied states): a screen renders one of them.
 */
export function useDocumentTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · ${PRODUCT}` : PRODUCT;
  }, [title]);
}
