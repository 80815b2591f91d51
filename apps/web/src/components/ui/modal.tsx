import * as Dialog from "@radix-ui/react-dialog";
import { X } from "lucide-react";
import { createContext, type ReactNode, useContext } from "react";
import { cn } from "../../lib/cn";

const InModal = createContext(false);

/** Whether a component is rendered inside a Modal (its buttons then stay in view: ModalFooter). */
export function useInModal(): boolean {
  return useContext(InModal);
}

/**
 * A dialog's action row: in a Modal, it stays at the bottom of the dialog while its content
 * scrolls, so the main button is visible without scrolling on any screen (issue 32: a phone's
 * checkout had its button two screens down); elsewhere, an ordinary row under the form.
 */
export function ModalFooter({ children }: { children: ReactNode }) {
  const inModal = useInModal();
  return (
    <div
      data-modal-footer=""
      className={cn(
        "flex flex-col-reverse gap-2 border-t border-slate-100 sm:flex-row sm:justify-end",
        inModal ? "sticky bottom-0 z-10 -mx-5 mt-5 bg-white px-5 py-4 sm:-mx-6 sm:px-6" : "pt-5",
      )}
    >
      {children}
    </div>
  );
}

/**
 * A dialog for a form (focus trapped, Esc and the close button dismiss, focus returns to the
 * trigger). While `busy`, it stays open so a payment in flight is not abandoned. Long content
 * scrolls inside it, so it fits a 375 px phone.
 */
export function Modal({
  open,
  onOpenChange,
  title,
  description,
  busy = false,
  className,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  busy?: boolean;
  className?: string;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={open} onOpenChange={(next) => !busy && onOpenChange(next)}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-50 bg-slate-900/40 backdrop-blur-sm" />
        <Dialog.Content
          {...(description ? {} : { "aria-describedby": undefined })}
          className={cn(
            "fixed top-1/2 left-1/2 z-50 flex max-h-[calc(100dvh-2rem)] w-[calc(100%-2rem)] max-w-lg -translate-x-1/2 -translate-y-1/2 flex-col rounded-xl border border-slate-200 bg-white shadow-xl focus:outline-none",
            className,
          )}
        >
          <div className="flex items-start justify-between gap-4 border-b border-slate-100 px-5 py-4 sm:px-6">
            <div className="min-w-0">
              <Dialog.Title className="text-lg font-semibold text-slate-900">{title}</Dialog.Title>
              {description && (
                <Dialog.Description className="mt-1 text-sm text-slate-500">{description}</Dialog.Description>
              )}
            </div>
            <Dialog.Close
              disabled={busy}
              aria-label="Close"
              className="-mr-2 rounded-lg p-2 text-slate-400 hover:bg-slate-100 hover:text-slate-600 focus-visible:outline-2 focus-visible:outline-brand-600 disabled:opacity-50"
            >
              <X className="size-4" aria-hidden="true" />
            </Dialog.Close>
          </div>
          {/* A footer (ModalFooter) ends the content flush with the dialog's bottom edge. */}
          <div className="overflow-y-auto px-5 pt-5 pb-5 has-[[data-modal-footer]]:pb-0 sm:px-6">
            <InModal.Provider value={true}>{children}</InModal.Provider>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
