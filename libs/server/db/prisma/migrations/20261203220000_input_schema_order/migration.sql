-- A workflow's input schema keeps the order its author gave the inputs: the run form lists them in
-- that order. jsonb stores object keys sorted (shortest first), so the schema is kept as json (the
-- text as written). Existing rows keep the order jsonb left them in.

-- AlterTable
ALTER TABLE "workflow" ALTER COLUMN "input_schema" SET DATA TYPE JSON USING "input_schema"::json;

-- AlterTable
ALTER TABLE "workflow_version" ALTER COLUMN "input_schema" SET DATA TYPE JSON USING "input_schema"::json;
