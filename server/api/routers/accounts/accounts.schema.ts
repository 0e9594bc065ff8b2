/** Inputs of the embedded-IAM account procedures; the account's fields live in server/core/account-fields.ts. */
import { z } from "zod";
import { accountUsername, newAccountInput } from "@/server/core/account-fields";

export const accountsCreateInput = newAccountInput;
export const accountsSetDisabledInput = z.object({
  username: accountUsername,
  disabled: z.boolean({ message: "expected true or false" }),
});
