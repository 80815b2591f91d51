import { AppInfoSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { apiRequest } from "../../../lib/api-client";

export type AppMode = "completion" | "chat" | "workflow";

/** `GET /app/{slug}/info` (Dify): the app's mode, for any app the caller may call. */
export async function fetchAppMode(slug: string, apiKey: string | undefined): Promise<AppMode> {
  const info = await apiRequest(`/app/${encodeURIComponent(slug)}/info`, {
    schema: AppInfoSchema,
    token: apiKey || undefined,
  });
  return info.mode;
}

/** `value` once it has stayed the same for `ms`: a slug being typed is not looked up per key. */
function useSettledValue<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * The mode of the app being tested, or undefined while unknown (no slug, still typing, or not an
 * app the caller may call): then both panels stay, and the call itself says what is wrong.
 */
export function useAppMode(slug: string, apiKey: string): AppMode | undefined {
  const settled = useSettledValue(`${slug.trim()}\n${apiKey.trim()}`, 300);
  const [settledSlug = "", settledKey = ""] = settled.split("\n");
  const mode = useQuery({
    queryKey: ["api-test", "app-mode", settledSlug, settledKey],
    queryFn: () => fetchAppMode(settledSlug, settledKey || undefined),
    enabled: settledSlug !== "",
    retry: false,
  });
  return settledSlug === slug.trim() ? mode.data : undefined;
}
