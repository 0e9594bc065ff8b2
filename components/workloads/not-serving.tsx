import { EmptyState } from "@/components/ui/empty-state";

/** The control plane is absent or not serving: the same state the namespaces page shows. */
export function ControlPlaneNotServing({ phase, message }: { phase: string; message: string }) {
  return (
    <EmptyState
      title={phase === "Absent" ? "No control plane yet — ask an operator" : `The control plane is ${phase}`}
    >
      <p>{message}</p>
      <p>This page updates by itself once the control plane serves.</p>
    </EmptyState>
  );
}
