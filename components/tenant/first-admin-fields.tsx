"use client";

/** The create-tenant dialog's optional first admin account (embedded IAM). */
export interface FirstAdminDraft {
  username: string;
  name: string;
  email: string;
}

export const emptyFirstAdmin: FirstAdminDraft = { username: "", name: "", email: "" };

/** The draft as the create schema wants it: absent when every field is blank. */
export function firstAdminInput(draft: FirstAdminDraft): FirstAdminDraft | undefined {
  const trimmed = { username: draft.username.trim(), name: draft.name.trim(), email: draft.email.trim() };
  return trimmed.username || trimmed.name || trimmed.email ? trimmed : undefined;
}

export function FirstAdminFields({
  value,
  onChange,
}: {
  value: FirstAdminDraft;
  onChange: (value: FirstAdminDraft) => void;
}) {
  const field = (key: keyof FirstAdminDraft, label: string, type = "text") => (
    <label className="field">
      {label}
      <input
        type={type}
        value={value[key]}
        onChange={(event) => onChange({ ...value, [key]: event.target.value })}
        autoComplete="off"
      />
    </label>
  );
  return (
    <fieldset className="toolbar" aria-label="First admin account (optional)">
      <legend>First admin account (optional, embedded IAM): shown a one-time password</legend>
      {field("username", "Admin username")}
      {field("name", "Admin name")}
      {field("email", "Admin email", "email")}
    </fieldset>
  );
}
