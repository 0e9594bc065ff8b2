import type { ReactNode } from "react";

/** A labelled form control in a toolbar or form: the label's text, then the control it names. */
export function Field({ label, children }: { label: ReactNode; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child it is given
    <label className="field">
      {label}
      {children}
    </label>
  );
}
