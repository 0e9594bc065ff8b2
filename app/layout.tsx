import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "@/components/providers";
import { readTheme } from "@/components/ui/theme-server";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Ring0", template: "%s · Ring0" },
  description: "Hard multi-tenancy on Kubernetes",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" data-theme={await readTheme()}>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
