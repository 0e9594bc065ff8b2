import styles from "./status-badge.module.css";

export type BadgeTone = "success" | "failure" | "warning" | "progress" | "neutral" | "muted";

const toneClass: Record<BadgeTone, string> = {
  success: "badge-success",
  failure: "badge-failure",
  warning: styles.warning ?? "",
  progress: styles.progress ?? "",
  neutral: "",
  muted: styles.muted ?? "",
};

/** A pill with a coloured word (the existing .badge look); `title` explains it on hover. */
export function StatusBadge({
  tone,
  title,
  children,
}: {
  tone: BadgeTone;
  title?: string;
  children: React.ReactNode;
}) {
  return (
    <span className={`badge ${toneClass[tone]}`.trim()} title={title}>
      {children}
    </span>
  );
}
