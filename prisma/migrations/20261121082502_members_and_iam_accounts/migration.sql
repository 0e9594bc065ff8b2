-- CreateEnum
CREATE TYPE "role_source" AS ENUM ('iam', 'ring0');

-- AlterTable
ALTER TABLE "memberships" ADD COLUMN     "removed_at" TIMESTAMP(3),
ADD COLUMN     "role_set_at" TIMESTAMP(3),
ADD COLUMN     "role_set_by" TEXT,
ADD COLUMN     "role_source" "role_source" NOT NULL DEFAULT 'iam';

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "disabled_at" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "iam_accounts" (
    "id" TEXT NOT NULL,
    "tenant" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "disabled_at" TIMESTAMP(3),
    "disabled_by" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "iam_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "iam_accounts_username_idx" ON "iam_accounts"("username");

-- CreateIndex
CREATE UNIQUE INDEX "iam_accounts_tenant_username_key" ON "iam_accounts"("tenant", "username");
