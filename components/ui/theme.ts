/** Shared by the server (reads the cookie) and the toggle (writes it); not a client module. */
export type Theme = "light" | "dark" | "system";
export const themeCookie = "ring0-theme";

export function parseTheme(value: string | undefined): Theme {
  return value === "light" || value === "dark" ? value : "system";
}
