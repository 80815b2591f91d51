import { Outlet, ScrollRestoration } from "react-router";

/**
 * Every route. A new screen opens at its top (not at the previous screen's scroll position, which
 * hid titles under the header); Back and Forward return to where the reader was. Changes of the
 * query on one screen (filters, analytics period) keep the position: they pass preventScrollReset.
 */
export function RootLayout() {
  return (
    <>
      <ScrollRestoration />
      <Outlet />
    </>
  );
}
