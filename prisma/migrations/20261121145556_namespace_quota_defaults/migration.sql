-- CreateTable
CREATE TABLE "namespace_quota_defaults" (
    "tenant" TEXT NOT NULL,
    "hard" JSONB NOT NULL,
    "updated_by" TEXT NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "namespace_quota_defaults_pkey" PRIMARY KEY ("tenant")
);
