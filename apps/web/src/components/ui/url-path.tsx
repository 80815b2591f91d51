import { Fragment } from "react";

/**
 * A URL path that wraps only after its slashes (`/api/app/` `my-app/` `completion-messages`),
 * never inside a word; a single segment wider than its box still breaks (`break-words`) rather
 * than overflowing the page.
 */
export function UrlPath({ path }: { path: string }) {
  const segments = path.split("/");
  return (
    <span className="break-words">
      {segments.map((segment, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the segments of one fixed path, in order.
        <Fragment key={index}>
          {segment}
          {index < segments.length - 1 && (
            <>
              /<wbr />
            </>
          )}
        </Fragment>
      ))}
    </span>
  );
}
