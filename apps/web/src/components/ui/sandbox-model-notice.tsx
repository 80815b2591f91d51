import { useRuntimeConfig } from "../../lib/runtime-config";
import { Alert } from "./alert";

export const SANDBOX_MODEL_NOTICE =
  "Sandbox model: no LLM provider key is configured, so calls are answered by the built-in sandbox model (it echoes the rendered prompt).";

/** Shown where prompts run (builder, editor, API test console) when the host has no LLM key. */
export function SandboxModelNotice({ className }: { className?: string }) {
  const config = useRuntimeConfig();
  if (!config.sandbox.llm) return null;
  return (
    <Alert tone="info" role="note" className={className}>
      {SANDBOX_MODEL_NOTICE}
    </Alert>
  );
}
