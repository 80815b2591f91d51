import type { ReactNode } from "react";
import { Alert } from "../../components/ui/alert";
import { Card } from "../../components/ui/card";
import { LogoMark } from "../../components/ui/logo";
import { useDocumentTitle } from "../../lib/document-title";

/** The centred card shared by the sign-in and sign-up screens, under the brand header. */
export function AuthScreen({
  title,
  subtitle,
  error,
  children,
  footer,
}: {
  title: string;
  subtitle?: string;
  error?: string | null;
  children: ReactNode;
  footer?: ReactNode;
}) {
  useDocumentTitle(title);
  return (
    <div className="mx-auto w-full max-w-md">
      <div className="mb-8 flex flex-col items-center text-center">
        <LogoMark className="size-12" />
        <h1 className="mt-6 text-2xl font-semibold tracking-tight text-slate-900">{title}</h1>
        {subtitle && <p className="mt-2 text-sm text-slate-500">{subtitle}</p>}
      </div>
      <Card className="space-y-6 px-6 py-8 sm:px-8">
        {error && <Alert tone="error">{error}</Alert>}
        {children}
      </Card>
      {footer && <div className="mt-6 text-center text-sm text-slate-500">{footer}</div>}
    </div>
  );
}
