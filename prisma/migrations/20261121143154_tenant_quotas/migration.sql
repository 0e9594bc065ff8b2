-- CreateTable
CREATE TABLE "quota_templates" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "hard" JSONB NOT NULL,
    "is_default" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "updated_by" TEXT NOT NULL,

    CONSTRAINT "quota_templates_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "quota_refusals" (
    "id" TEXT NOT NULL,
    "tenant" TEXT NOT NULL,
    "first_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "count" INTEGER NOT NULL DEFAULT 1,
    "user" TEXT,
    "operation" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "namespace" TEXT,
    "name" TEXT,
    "exceeded" JSONB NOT NULL,
    "message" TEXT NOT NULL,

    CONSTRAINT "quota_refusals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "quota_samples" (
    "id" BIGSERIAL NOT NULL,
    "tenant" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "used" JSONB NOT NULL,
    "hard" JSONB NOT NULL,

    CONSTRAINT "quota_samples_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "quota_refusals_tenant_last_at_idx" ON "quota_refusals"("tenant", "last_at");

-- CreateIndex
CREATE INDEX "quota_samples_tenant_at_idx" ON "quota_samples"("tenant", "at");

-- CreateIndex
CREATE INDEX "quota_samples_at_idx" ON "quota_samples"("at");
