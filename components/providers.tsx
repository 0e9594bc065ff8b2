"use client";

import type { ReactNode } from "react";
import { TRPCReactProvider } from "@/components/trpc/client";
import { Toaster } from "@/components/ui/toast";

export function Providers({ children }: { children: ReactNode }) {
  return (
    <Toaster>
      <TRPCReactProvider>{children}</TRPCReactProvider>
    </Toaster>
  );
}
