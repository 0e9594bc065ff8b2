import "server-only";
import { cookies } from "next/headers";
import { type Theme, themeCookie } from "@/components/ui/theme-toggle";

export async function readTheme(): Promise<Theme> {
  const value = (await cookies()).get(themeCookie)?.value;
  return value === "light" || value === "dark" ? value : "system";
}
