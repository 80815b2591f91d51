import { Pencil, Save } from "lucide-react";
import type { ButtonHTMLAttributes } from "react";
import { Link, type LinkProps } from "react-router";
import { cn } from "../../lib/cn";
import { ModalFooter } from "./modal";
import { Spinner } from "./spinner";

export type ButtonVariant = "primary" | "secondary" | "ghost" | "danger";
export type ButtonSize = "sm" | "md" | "lg";

const base =
  "inline-flex items-center justify-center gap-2 whitespace-nowrap rounded-lg font-medium transition-colors " +
  "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600 " +
  "disabled:cursor-not-allowed disabled:opacity-60";

const variants: Record<ButtonVariant, string> = {
  primary: "bg-brand-600 text-white shadow-sm hover:bg-brand-700 disabled:hover:bg-brand-600",
  secondary:
    "border border-slate-300 bg-white text-slate-700 shadow-sm hover:bg-slate-50 hover:text-slate-900 disabled:hover:bg-white",
  ghost: "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
  danger: "bg-red-600 text-white shadow-sm hover:bg-red-700 disabled:hover:bg-red-600",
};

const sizes: Record<ButtonSize, string> = {
  sm: "h-8 px-3 text-sm",
  md: "h-10 px-4 text-sm",
  lg: "h-11 px-5 text-base",
};

export function buttonClasses(
  variant: ButtonVariant = "primary",
  size: ButtonSize = "md",
  className?: string,
) {
  return cn(base, variants[variant], sizes[size], className);
}

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: ButtonVariant;
  size?: ButtonSize;
  /** Shows a spinner and disables the button. */
  busy?: boolean;
}

export function Button({
  variant,
  size,
  busy = false,
  className,
  disabled,
  children,
  type,
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type ?? "button"}
      className={buttonClasses(variant, size, className)}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy && <Spinner className="size-4" />}
      {children}
    </button>
  );
}

export interface ButtonLinkProps extends LinkProps {
  variant?: ButtonVariant;
  size?: ButtonSize;
}

/** A router link that looks like a button. */
export function ButtonLink({ variant, size, className, ...rest }: ButtonLinkProps) {
  return <Link className={buttonClasses(variant, size, className)} {...rest} />;
}

/** A small "Edit" button for one item of a list, named after the item for screen readers. */
export function EditButton({
  itemName,
  ...rest
}: Omit<ButtonProps, "children" | "size"> & { itemName: string }) {
  return (
    <Button size="sm" aria-label={`Edit ${itemName}`} {...rest}>
      <Pencil className="size-4" aria-hidden="true" />
      Edit
    </Button>
  );
}

/** "Save Changes" with its icon, "Saving..." while the save runs. */
export function SaveChangesButton({
  saving,
  ...rest
}: Omit<ButtonProps, "busy" | "children"> & { saving: boolean }) {
  return (
    <Button busy={saving} {...rest}>
      {!saving && <Save className="size-4" aria-hidden="true" />}
      {saving ? "Saving..." : "Save Changes"}
    </Button>
  );
}

/** A form dialog's footer: Cancel, then the submit button, which reads `busyLabel` while it runs. */
export function CancelSubmitButtons({
  busy,
  onCancel,
  label,
  busyLabel,
}: {
  busy: boolean;
  onCancel: () => void;
  label: string;
  busyLabel: string;
}) {
  return (
    <ModalFooter>
      <Button variant="secondary" onClick={onCancel} disabled={busy}>
        Cancel
      </Button>
      <Button type="submit" busy={busy}>
        {busy ? busyLabel : label}
      </Button>
    </ModalFooter>
  );
}
