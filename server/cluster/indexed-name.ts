/** Names made of a prefix and an index ("ring0-node-3"), and back (pure). */
export function indexedNames(prefix: string) {
  return {
    name: (index: number): string => `${prefix}${index}`,
    /** The index of a name made by `name`, or undefined (no leading zeros, nothing after it). */
    index(name: string): number | undefined {
      if (!name.startsWith(prefix)) return undefined;
      const rest = name.slice(prefix.length);
      return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
    },
  };
}
