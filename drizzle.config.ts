import { defineConfig } from "drizzle-kit";

// drizzle-kit writes plain SQL files into migrations/, which `wrangler d1 migrations apply`
// and the tests (test/setup.ts) apply alike.
export default defineConfig({
  dialect: "sqlite",
  schema: "./schema/index.ts",
  out: "./migrations",
  migrations: { prefix: "index" },
});
