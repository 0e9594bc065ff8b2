/** The browser shell's terminal (xterm), as a person reads and types into it. */
import type { Locator, Page } from "@playwright/test";

/** What xterm shows, row by row (its DOM renderer draws spaces as no-break spaces). */
export async function terminalText(terminal: Locator): Promise<string> {
  const rows = await terminal.locator(".xterm-rows > div").allTextContents();
  return rows.map((row) => row.replace(/\u00a0/g, " ")).join("\n");
}

/** Types a line into the focused terminal, as a person would. */
export async function typeLine(page: Page, line: string) {
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}
