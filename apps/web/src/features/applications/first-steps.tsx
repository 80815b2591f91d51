import { Compass, KeyRound, type LucideIcon, Plus, Wallet } from "lucide-react";
import { Link } from "react-router";
import { Card } from "../../components/ui/card";
import { IconTile } from "../../components/ui/icon-tile";
import { formatMicros } from "../../lib/format";
import { useWallet } from "../../lib/wallet-query";

interface Step {
  to: string;
  title: string;
  description: string;
  icon: LucideIcon;
}

/**
 * The dashboard of someone without applications (most people: they call others' apps): what they
 * can do first, calling apps before making one. The wallet step says what is in the wallet.
 */
export function FirstSteps() {
  const wallet = useWallet();
  const balance = wallet.data ? `Balance ${formatMicros(wallet.data.balance_micros)}. ` : "";
  const steps: Step[] = [
    {
      to: "/explore",
      title: "Explore apps",
      description: "Find AI apps others have published, and try them in the browser.",
      icon: Compass,
    },
    {
      to: "/wallet",
      title: "Top up your wallet",
      description: `${balance}Paid apps take their price per call from it.`,
      icon: Wallet,
    },
    {
      to: "/api-keys",
      title: "Create an API key",
      description: "Call any app from your own code with the OpenAI or Dify clients.",
      icon: KeyRound,
    },
    {
      to: "/applications/create",
      title: "Create your first app",
      description: "Turn a prompt or a workflow into a paid API of your own.",
      icon: Plus,
    },
  ];
  return (
    <section aria-labelledby="first-steps-title">
      <h2 id="first-steps-title" className="mb-4 text-lg font-semibold text-slate-900">
        Get started
      </h2>
      <ul className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        {steps.map(({ to, title, description, icon }) => (
          <li key={to}>
            <Card className="h-full transition hover:border-brand-300 hover:shadow-md">
              <Link
                to={to}
                className="flex h-full flex-col gap-3 p-5 focus-visible:outline-2 focus-visible:outline-brand-600"
              >
                <IconTile icon={icon} />
                <span className="font-medium text-slate-900">{title}</span>
                <span className="text-sm text-slate-500">{description}</span>
              </Link>
            </Card>
          </li>
        ))}
      </ul>
    </section>
  );
}
