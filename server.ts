/**
 * Ring0's server: Next.js plus the /ws/ streams, with embedded PostgreSQL and IAM when no
 * external ones are configured. `npm start` (production) or `npm run dev`.
 */
import { main } from "@/server/runtime/main";

void main(process.argv.slice(2));
