import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The shell embeds `dist/` (see src-tauri/tauri.conf.json, `frontendDist`).
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: { target: "safari15", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 400 },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
