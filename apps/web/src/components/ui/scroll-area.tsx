import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { cn } from "../../lib/cn";

/** Which edges of a sideways-scrolling box have more content beyond them. */
export interface Overflow {
  start: boolean;
  end: boolean;
}

const NONE: Overflow = { start: false, end: false };

/** Follows a box's scroll position and size: which of its edges hide content. */
export function useHorizontalOverflow<Box extends HTMLElement = HTMLDivElement>() {
  const ref = useRef<Box>(null);
  const [overflow, setOverflow] = useState<Overflow>(NONE);
  const measure = useCallback(() => {
    const box = ref.current;
    if (!box) return;
    const hidden = box.scrollWidth - box.clientWidth;
    const next = { start: box.scrollLeft > 1, end: hidden - box.scrollLeft > 1 };
    setOverflow((current) => (current.start === next.start && current.end === next.end ? current : next));
  }, []);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    measure();
    box.addEventListener("scroll", measure, { passive: true });
    // Absent in old browsers and in jsdom: the box is then measured once.
    const observer = typeof ResizeObserver === "undefined" ? undefined : new ResizeObserver(measure);
    observer?.observe(box);
    if (box.firstElementChild) observer?.observe(box.firstElementChild);
    return () => {
      box.removeEventListener("scroll", measure);
      observer?.disconnect();
    };
  }, [measure]);
  return { ref, overflow };
}

/**
 * Content wider than its place (a table on a phone) that scrolls sideways with a cue: the edge
 * with more beyond it fades out, and a line above says there is more to the side. Nothing shows
 * when everything fits.
 */
export function HorizontalScroll({ label, children }: { label: string; children: ReactNode }) {
  const { ref, overflow } = useHorizontalOverflow<HTMLElement>();
  return (
    <div>
      {(overflow.start || overflow.end) && (
        <p className="border-b border-slate-100 px-4 py-1.5 text-xs text-slate-500" aria-hidden="true">
          Scroll sideways for more columns {overflow.end ? "→" : "←"}
        </p>
      )}
      <div className="relative">
        {/* Focusable so keyboard users can scroll it; named for screen readers. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
        <section ref={ref} className="overflow-x-auto" aria-label={label} tabIndex={0}>
          {children}
        </section>
        <EdgeFades overflow={overflow} />
      </div>
    </div>
  );
}

/** White fades over the edges of a scrolling box (placed in a `relative` parent) that hide more content. */
export function EdgeFades({ overflow }: { overflow: Overflow }) {
  const fade = "pointer-events-none absolute inset-y-0 w-10 from-white to-transparent transition-opacity";
  return (
    <>
      <div
        aria-hidden="true"
        className={cn(fade, "left-0 bg-gradient-to-r", overflow.start ? "opacity-100" : "opacity-0")}
      />
      <div
        aria-hidden="true"
        className={cn(fade, "right-0 bg-gradient-to-l", overflow.end ? "opacity-100" : "opacity-0")}
      />
    </>
  );
}
