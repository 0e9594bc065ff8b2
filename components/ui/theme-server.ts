import "server-only";
import { cookies } from "next/headers";
import { parseTheme, type Theme, themeCookie } from "@/components/ui/theme";

export async function readTheme(): Promise<Theme> {
  return parseTheme((await cookies()).get(themeCookie)?.value);
}
