/** The signed-in person's initial in a brand circle (user menu, mobile menu). */
export function UserAvatar({ initial, className = "size-9" }: { initial: string; className?: string }) {
  return (
    <span
      aria-hidden="true"
      className={`flex ${className} items-center justify-center rounded-full bg-brand-600 text-sm font-semibold text-white`}
    >
      {initial}
    </span>
  );
}
