-- CreateTable
CREATE TABLE "exec_sessions" (
    "id" TEXT NOT NULL,
    "user_id" TEXT,
    "user_name" TEXT NOT NULL,
    "user_tenant" TEXT NOT NULL,
    "tenant" TEXT,
    "source" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "pod" TEXT NOT NULL,
    "container" TEXT,
    "command" JSONB NOT NULL,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMP(3),
    "exit_code" INTEGER,
    "end_reason" TEXT,
    "bytes_in" BIGINT NOT NULL DEFAULT 0,
    "bytes_out" BIGINT NOT NULL DEFAULT 0,
    "transcript" BYTEA,

    CONSTRAINT "exec_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "exec_sessions_tenant_started_at_idx" ON "exec_sessions"("tenant", "started_at");

-- CreateIndex
CREATE INDEX "exec_sessions_started_at_idx" ON "exec_sessions"("started_at");

-- AddForeignKey
ALTER TABLE "exec_sessions" ADD CONSTRAINT "exec_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
