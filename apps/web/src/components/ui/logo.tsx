import { Link } from "react-router";
import { cn } from "../../lib/cn";

/** The Promptmint mark: a "P" on the brand colour. */
export function LogoMark({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={cn("size-8", className)} aria-hidden="true">
      <rect width="32" height="32" rx="8" className="fill-brand-600" />
      <path
        d="M9 23V9h7.5a4.5 4.5 0 0 1 0 9H13"
        fill="none"
        stroke="#fff"
        strokeWidth="3"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
      <circle cx="22.5" cy="22.5" r="2.5" className="fill-brand-300" />
    </svg>
  );
}

/** The brand link to the landing page; its accessible name is 'Promptmint'. */
export function BrandLink({ className }: { className?: string }) {
  return (
    <Link
      to="/"
      className={cn(
        "inline-flex items-center gap-2 rounded-lg text-lg font-semibold tracking-tight text-slate-900",
        className,
      )}
    >
      <LogoMark className="size-7" />
      {/* On the narrowest phones the mark alone leaves room for the bar's links. */}
      <span className="max-[420px]:sr-only">Promptmint</span>
    </Link>
  );
}
