/**
 * Fail the test that logs through console.error (React warnings, unexpected errors swallowed by code
 * under test…). The call throws where it happens, and in case that throw is caught by the code under
 * test, the test still fails afterwards.
 */
import { format } from "node:util";
import { afterEach } from "vitest";

const original = console.error;
let logged: string[] = [];

console.error = (...args: unknown[]) => {
  const message = format(...args);
  logged.push(message);
  original(...args);
  throw new Error(`console.error called during the test: ${message}`);
};

afterEach(() => {
  const messages = logged;
  logged = [];
  if (messages.length > 0) {
    throw new Error(`console.error was called during the test:\n${messages.join("\n")}`);
  }
});
