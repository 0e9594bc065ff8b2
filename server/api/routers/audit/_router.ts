import { createTRPCRouter, protectedProcedure } from "@/server/api/trpc";
import {
  execSessionsInput,
  execTranscriptInput,
  listSessions,
  readTranscript,
} from "./exec-sessions.handler";
import { listAudit } from "./list.handler";
import { auditListInput } from "./list.schema";

export const auditRouter = createTRPCRouter({
  list: protectedProcedure.input(auditListInput).query(({ ctx, input }) => listAudit(ctx, input)),
  /** Browser shell sessions (who, where, when, exit code, bytes), by the audit log's rules. */
  execSessions: protectedProcedure
    .input(execSessionsInput)
    .query(({ ctx, input }) => listSessions(ctx, input)),
  execTranscript: protectedProcedure
    .input(execTranscriptInput)
    .query(({ ctx, input }) => readTranscript(ctx, input)),
});
