"use client";

/**
 * Tabs over a pod's or node's streams (logs, shell…). A tab's panel mounts when first chosen and
 * then stays mounted while hidden, so switching tabs keeps a shell session and the lines read.
 */
import { type ReactNode, useId, useState } from "react";
import styles from "@/components/streams/streams.module.css";

export interface StreamTab {
  id: string;
  title: string;
  content: ReactNode;
}

export function StreamTabs({ label, tabs }: { label: string; tabs: readonly StreamTab[] }) {
  const base = useId();
  const [selected, setSelected] = useState(tabs[0]?.id ?? "");
  const [visited, setVisited] = useState<ReadonlySet<string>>(() => new Set([selected]));
  const choose = (id: string) => {
    setSelected(id);
    setVisited((seen) => (seen.has(id) ? seen : new Set([...seen, id])));
  };
  const move = (from: number, step: number) => {
    const next = tabs[(from + step + tabs.length) % tabs.length];
    if (!next) return;
    choose(next.id);
    document.getElementById(`${base}-tab-${next.id}`)?.focus();
  };
  return (
    <div>
      <div role="tablist" aria-label={label} className={styles.tabs}>
        {tabs.map((tab, index) => (
          <button
            key={tab.id}
            id={`${base}-tab-${tab.id}`}
            type="button"
            role="tab"
            className={styles.tab}
            aria-selected={tab.id === selected}
            aria-controls={`${base}-panel-${tab.id}`}
            tabIndex={tab.id === selected ? 0 : -1}
            onClick={() => choose(tab.id)}
            onKeyDown={(event) => {
              if (event.key === "ArrowRight") move(index, 1);
              if (event.key === "ArrowLeft") move(index, -1);
            }}
          >
            {tab.title}
          </button>
        ))}
      </div>
      {tabs.map((tab) => (
        <div
          key={tab.id}
          id={`${base}-panel-${tab.id}`}
          role="tabpanel"
          aria-labelledby={`${base}-tab-${tab.id}`}
          hidden={tab.id !== selected}
        >
          {visited.has(tab.id) ? tab.content : null}
        </div>
      ))}
    </div>
  );
}
