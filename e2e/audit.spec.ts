import { expect, signInThroughIam, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";

test("sign-in and sign-out are audited and operators can filter for them", async ({ page, loginAs }) => {
  await signInThroughIam(page, "globex-member");
  await expect(page).toHaveURL(/\/t\/globex$/);
  await new AppShell(page).signOut();

  const operator = await loginAs("operator");
  const shell = new AppShell(operator);
  await shell.open("Audit log");
  await operator.getByRole("combobox", { name: "Action" }).selectOption({ label: "Sign-outs" });
  const signOuts = operator.getByRole("table", { name: "Audit log" });
  await expect(signOuts.getByRole("row").filter({ hasText: "Gus Member (Globex)" }).first()).toContainText(
    "auth.sign-out",
  );
  await expect(signOuts.getByText("auth.sign-in")).toHaveCount(0);
});
