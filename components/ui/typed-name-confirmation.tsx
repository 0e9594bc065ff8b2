import { type CSSProperties, type FormEvent, type ReactNode, useState } from "react";

/**
 * A destructive action that cannot be undone, confirmed by typing the thing's name: the submit
 * button stays disabled until the typed text is exactly `name`. `title` names the form and heads
 * it ("Delete tenant acme"); `onConfirm` receives the typed name, for the API to check again.
 */
export function TypedNameConfirmation({
  name,
  title,
  confirmLabel,
  pending,
  error,
  onConfirm,
  onCancel,
  style,
  children,
}: {
  name: string;
  title: string;
  /** The input's label, e.g. "Type the tenant's name to confirm". */
  confirmLabel: string;
  pending: boolean;
  error?: string | null;
  onConfirm: (confirm: string) => void;
  onCancel: () => void;
  style?: CSSProperties;
  /** What the action destroys, shown above the input. */
  children: ReactNode;
}) {
  const [confirm, setConfirm] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (confirm === name) onConfirm(confirm);
  };

  return (
    <form className="card" onSubmit={submit} aria-label={title} style={style}>
      <h2>{title}</h2>
      {children}
      <label className="field">
        {confirmLabel}
        <input value={confirm} onChange={(event) => setConfirm(event.target.value)} autoComplete="off" />
      </label>
      <p className="toolbar">
        <button type="submit" className="button button-primary" disabled={confirm !== name || pending}>
          {pending ? "Deleting…" : `Delete ${name}`}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
      {error != null ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
