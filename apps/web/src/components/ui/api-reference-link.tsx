import { BookOpen } from "lucide-react";
import type { AnchorHTMLAttributes } from "react";
import { cn } from "../../lib/cn";
import { buttonClasses } from "./button";

/** The API reference: a page of the API server, not a route of this app. */
export const API_REFERENCE_PATH = "/api/docs";

const looks = {
  /** A small secondary button, beside an app's other actions. */
  button: buttonClasses("secondary", "sm"),
  /** A link inside a sentence. */
  text: "font-medium text-brand-600 hover:text-brand-700",
  /** No look of its own: the menu item it sits in styles it. */
  plain: "",
};

/**
 * The one link to the API reference (navigation, every app page). A plain anchor, never the
 * router's Link: /api/docs is served by the API, so it needs a full page load.
 */
export function ApiReferenceLink({
  look = "button",
  className,
  children = "API reference",
  ...rest
}: { look?: keyof typeof looks } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, "href">) {
  return (
    <a href={API_REFERENCE_PATH} className={cn(looks[look], className)} {...rest}>
      {look !== "text" && <BookOpen className="size-4 shrink-0" aria-hidden="true" />}
      {children}
    </a>
  );
}
