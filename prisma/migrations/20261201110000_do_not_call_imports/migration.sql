-- Do-not-call imports read as a stream: the rows of the import under way wait in do_not_call_import_rows (keyed by
-- the list's account and the number, so a number repeated in the file is one row, the first) until the whole file
-- has been read, and then move to the list in bounded batches; what the process keeps does not grow with the file.
-- do_not_call_imports holds one row per account that has imported: the import under way (one at a time per
-- account, across replicas; one whose heartbeat stopped is taken over) and how many began in the current hour.
-- Two new small tables: nothing else is locked.

-- CreateTable
CREATE TABLE "do_not_call_imports" (
    "account_id" UUID NOT NULL,
    "import_id" UUID NOT NULL,
    "heartbeat_at" TIMESTAMPTZ(3),
    "window_started_at" TIMESTAMPTZ(3) NOT NULL,
    "window_count" INTEGER NOT NULL,

    CONSTRAINT "do_not_call_imports_pkey" PRIMARY KEY ("account_id")
);

-- CreateTable
CREATE TABLE "do_not_call_import_rows" (
    "account_id" UUID NOT NULL,
    "phone_number" TEXT NOT NULL,
    "reason" TEXT,
    "line" INTEGER NOT NULL,

    CONSTRAINT "do_not_call_import_rows_pkey" PRIMARY KEY ("account_id","phone_number")
);

-- AddForeignKey
ALTER TABLE "do_not_call_imports" ADD CONSTRAINT "do_not_call_imports_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "do_not_call_import_rows" ADD CONSTRAINT "do_not_call_import_rows_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
