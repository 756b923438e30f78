import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "scripts/test/*.test.ts"],
    // Fixture projects hold users' own scenario files (`opencomputer test`), not our tests.
    exclude: [...configDefaults.exclude, "**/fixtures/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
