import { Outlet } from "react-router";
import { BrandLink } from "../../components/ui/logo";

/** Sign-in, sign-up and the identity callback: the brand header and a centred card. */
export function AuthLayout() {
  return (
    <div className="flex min-h-screen flex-col bg-linear-to-b from-white to-slate-100">
      <header className="px-4 py-5 sm:px-6 lg:px-8">
        <BrandLink />
      </header>
      <main className="flex flex-1 items-start justify-center px-4 pt-6 pb-16 sm:items-center sm:pt-0">
        <Outlet />
      </main>
    </div>
  );
}
