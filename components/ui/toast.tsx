"use client";

import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from "react";

export type ToastKind = "info" | "error";
interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
}

type Listener = (toast: Omit<Toast, "id">) => void;
const listeners = new Set<Listener>();

/** Raise a toast from anywhere on the client (the query client reports failures through it). */
export function toast(message: string, kind: ToastKind = "info"): void {
  for (const listener of listeners) listener({ kind, message });
}

const ToastContext = createContext<typeof toast>(toast);
export const useToast = () => useContext(ToastContext);

export function Toaster({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((item) => item.id !== id)), []);

  useEffect(() => {
    let next = 1;
    const listener: Listener = (item) => {
      const id = next++;
      setToasts((all) => [...all.slice(-4), { ...item, id }]);
      setTimeout(() => dismiss(id), item.kind === "error" ? 10_000 : 5_000);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, [dismiss]);

  return (
    <ToastContext.Provider value={toast}>
      {children}
      <section className="toasts" aria-label="Notifications" aria-live="polite">
        {toasts.map((item) => (
          <div
            key={item.id}
            className="toast"
            data-kind={item.kind}
            role={item.kind === "error" ? "alert" : "status"}
          >
            <p>{item.message}</p>
            <button type="button" aria-label="Dismiss notification" onClick={() => dismiss(item.id)}>
              ×
            </button>
          </div>
        ))}
      </section>
    </ToastContext.Provider>
  );
}
