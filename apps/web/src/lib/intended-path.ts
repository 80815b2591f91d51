/** SPEC §9: the page a signed-out visitor asked for, kept in session storage until sign-in ends. */
export const INTENDED_PATH_STORAGE_KEY = "promptmint.intendedPath";

const AUTH_PATHS = new Set(["/login", "/register", "/auth/login", "/auth/register", "/auth/callback"]);

function isSafeLocalPath(path: string): boolean {
  return path.startsWith("/") && !path.startsWith("//");
}

/** Remembers `path` (path plus search) unless it is one of the sign-in or sign-up screens. */
export function rememberIntendedPath(path: string): void {
  const pathname = path.split(/[?#]/, 1)[0] ?? "";
  if (AUTH_PATHS.has(pathname) || !isSafeLocalPath(path)) return;
  window.sessionStorage.setItem(INTENDED_PATH_STORAGE_KEY, path);
}

/** Returns the remembered path once and forgets it. */
export function takeIntendedPath(): string | null {
  const path = window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY);
  window.sessionStorage.removeItem(INTENDED_PATH_STORAGE_KEY);
  return path && isSafeLocalPath(path) ? path : null;
}

interface PathLike {
  pathname: string;
  search?: string;
  hash?: string;
}

/** `/path?search#hash` of a router location. */
export function pathOf(location: PathLike): string {
  return `${location.pathname}${location.search ?? ""}${location.hash ?? ""}`;
}

/** The page the guard sent a visitor away from (router state `from`), if any. */
export function fromPathOf(state: unknown): string | null {
  if (typeof state !== "object" || state === null || !("from" in state)) return null;
  const from = (state as { from: unknown }).from;
  if (typeof from !== "object" || from === null || typeof (from as PathLike).pathname !== "string")
    return null;
  const path = pathOf(from as PathLike);
  return isSafeLocalPath(path) ? path : null;
}
