import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// No React plugin: vite 8 compiles TSX itself (oxc), and the console needs no Fast Refresh.
// `base: "./"` keeps asset URLs relative, so the same build works under /console/ or any mount.
export default defineConfig({
  root: fileURLToPath(new URL("./app", import.meta.url)),
  base: "./",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: fileURLToPath(new URL("./dist/app", import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
});
