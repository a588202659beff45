import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The desktop shell embeds `dist/` (see src-tauri/tauri.conf.json, `frontendDist`), and so does
// `mgds serve` (crates/web). Addresses of the build's files are relative (`base`), so that the
// page works under the path a reverse proxy serves the service at (the service sets <base>).
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  base: "./",
  build: { target: "safari15", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 400 },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
