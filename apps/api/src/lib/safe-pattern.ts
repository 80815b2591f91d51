import { RE2JS } from "re2js";

/**
 * Creators' `pattern`s run on the server against callers' input, so they must never be able to
 * stall the process. JavaScript's RegExp backtracks (`^(a+)+$` on 31 characters takes seconds);
 * RE2 runs in time linear in the input for a compiled program, so the remaining costs are the
 * program's size and the input's length, and both are bounded here:
 *
 * - a pattern is refused when its program would be larger than MAX_PROGRAM_SIZE. The size is
 *   estimated from the pattern's text before compiling (RE2 expands counted repetitions, so
 *   `(?:a{1000}){1000}`-style patterns could otherwise cost 100+ ms just to compile), then
 *   checked exactly on the compiled program;
 * - one matching costs at most program size × input length steps; callers share a budget of
 *   such steps per request (`createMatchBudget`), so many fields or long strings cannot add up.
 */
export const MAX_PROGRAM_SIZE = 2_000;
/** Steps (program size × characters) one request may spend on patterns: a few ms at worst. */
export const MATCH_STEPS_PER_REQUEST = 1_000_000;

// The engine's first compile and match pay for JIT warm-up (tens of ms); paid here, at start-up,
// rather than by the first caller while every other request waits.
RE2JS.compile("^[a-z]{1,3}(?:x|y)+$").test(`ab${"x".repeat(100)}`);

export type PatternCheck = { ok: true; pattern: RE2JS } | { ok: false; problem: string };

const cache = new Map<string, PatternCheck>();
const CACHE_SIZE = 500;

/** The compiled pattern, or why it cannot be used (cached; the cache is bounded). */
export function compilePattern(source: string): PatternCheck {
  const cached = cache.get(source);
  if (cached) {
    // Least recently used goes first: re-inserting moves this one to the end.
    cache.delete(source);
    cache.set(source, cached);
    return cached;
  }
  const check = compileUncached(source);
  cache.set(source, check);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return check;
}

function compileUncached(source: string): PatternCheck {
  const tooComplex: PatternCheck = {
    ok: false,
    problem: `is too complex (its repetitions expand past ${MAX_PROGRAM_SIZE} steps); simplify it`,
  };
  if (estimateProgramSize(source) > MAX_PROGRAM_SIZE) return tooComplex;
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : "";
    return {
      ok: false,
      problem: `is not a supported regular expression${reason ? ` (${reason})` : ""}; lookarounds and backreferences are not supported`,
    };
  }
  if (pattern.programSize() > MAX_PROGRAM_SIZE) return tooComplex;
  return { ok: true, pattern };
}

/**
 * An upper estimate of the compiled program's size, read from the text in one pass: each
 * character counts one, a group counts its contents, and `{m,n}` multiplies what it repeats by
 * its larger bound. Classes and escapes count one.
 */
export function estimateProgramSize(source: string): number {
  // One frame per open group: the size so far and the size of the last atom (what a quantifier repeats).
  const frames: { size: number; last: number }[] = [{ size: 0, last: 0 }];
  let top = frames[0] as { size: number; last: number };
  let i = 0;
  const atom = (size: number) => {
    top.size += size;
    top.last = size;
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === "\\") {
      i += 2;
      // \p{...}, \x{...}, \u{...}: the braces belong to the escape.
      if (source[i] === "{") i = Math.max(i, source.indexOf("}", i) + 1) || source.length;
      atom(1);
    } else if (c === "[") {
      i += 1;
      if (source[i] === "]") i += 1;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      i += 1;
      atom(1);
    } else if (c === "(") {
      top = { size: 0, last: 0 };
      frames.push(top);
      i += 1;
    } else if (c === ")") {
      const inner = frames.length > 1 ? (frames.pop() as { size: number }).size : 0;
      top = frames[frames.length - 1] as { size: number; last: number };
      atom(inner + 1);
      i += 1;
    } else if (c === "{") {
      const counted = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 24));
      if (counted) {
        // A range compiles each optional copy to two steps.
        const times =
          Math.max(Number(counted[1]), Number(counted[2] || 0), 1) * (counted[2] !== undefined ? 2 : 1);
        top.size += top.last * (times - 1);
        top.last *= times;
        i += counted[0].length;
      } else {
        atom(1);
        i += 1;
      }
    } else if (c === "*" || c === "+" || c === "?" || c === "|") {
      // Quantifiers add a step around the atom they follow; an alternation starts a new atom.
      top.size += 1;
      if (c === "|") top.last = 0;
      i += 1;
    } else {
      atom(1);
      i += 1;
    }
    // The estimate only needs to say "too big": stop counting once it is.
    if (top.size > MAX_PROGRAM_SIZE * 4) return top.size;
  }
  return frames.reduce((sum, frame) => sum + frame.size, 0);
}

export interface MatchBudget {
  /** Whether `value` matches `pattern` in full, or "over budget" when the request has spent its steps. */
  matches(pattern: RE2JS, value: string): boolean | "over budget";
}

/** A per-request allowance of matching steps (see MATCH_STEPS_PER_REQUEST). */
export function createMatchBudget(steps = MATCH_STEPS_PER_REQUEST): MatchBudget {
  let left = steps;
  return {
    matches(pattern, value) {
      const cost = pattern.programSize() * (value.length + 1);
      if (cost > left) return "over budget";
      left -= cost;
      // JSON Schema's `pattern` is a search, not a full match (anchors are the author's choice).
      return pattern.test(value);
    },
  };
}
