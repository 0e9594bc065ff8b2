/** Human-readable ages and quantities for node and pod tables. */
export function age(iso: string | null, now: number = Date.now()): string {
  if (!iso) return "—";
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

const binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** "67108864Ki" → "64 GiB"; anything unparseable is shown as the API gave it. */
export function memory(quantity: string | undefined): string {
  if (!quantity) return "—";
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti)?$/.exec(quantity);
  if (!match) return quantity;
  const bytes = Number(match[1]) * (match[2] ? (binary[match[2]] ?? 1) : 1);
  const gib = bytes / 2 ** 30;
  return gib >= 1
    ? `${Number.isInteger(gib) ? gib : gib.toFixed(1)} GiB`
    : `${Math.round(bytes / 2 ** 20)} MiB`;
}

/** Cores in use as `kubectl top` writes them: "250m", "1.25" (below a millicore: "0m"). */
export function cores(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "—";
  if (value < 1) return `${Math.round(value * 1000)}m`;
  return value.toFixed(2).replace(/\.?0+$/, "");
}

/** Bytes in use: "12 MiB", "1.5 GiB". */
export function bytesInUse(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "—";
  if (value >= 2 ** 30) return `${(value / 2 ** 30).toFixed(1)} GiB`;
  return `${Math.round(value / 2 ** 20)} MiB`;
}
