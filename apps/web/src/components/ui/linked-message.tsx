import type { ReactNode } from "react";
import { Link } from "react-router";

/** An in-app path the server names in parentheses, as the release gates do: "(/prompts/x/evals)". */
const PATH_IN_PARENTHESES = /\((\/[a-z0-9][\w\-/]*)\)/gi;

/**
 * A server's message with the product pages it names made links, so a refusal that says where
 * to fix it ("run the evals on v3 first (/prompts/x/evals)") takes the reader there in one click.
 */
export function LinkedMessage({ text }: { text: string }) {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(PATH_IN_PARENTHESES)) {
    const path = match[1] as string;
    parts.push(text.slice(last, match.index), "(");
    parts.push(
      <Link key={match.index} to={path} className="font-medium underline underline-offset-2">
        {path}
      </Link>,
    );
    parts.push(")");
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return <>{parts}</>;
}
