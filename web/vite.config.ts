/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The sandbox (and CloudFront in the cloud) serve web/dist at "/"; `npm run dev` proxies the API
// to a sandbox on PODSTART_API (default http://127.0.0.1:3099).
const api = process.env.PODSTART_API ?? "http://127.0.0.1:3099";

export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        advancedChunks: {
          groups: [{ name: "vendor", test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ }],
        },
      },
    },
  },
  server: {
    proxy: {
      "/v1": api,
      "/ws": { target: api.replace(/^http/, "ws"), ws: true },
    },
  },
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.{ts,tsx}"],
    setupFiles: ["test/setup.ts"],
    css: false,
    pool: "threads",
    maxWorkers: 2,
    // jsdom renders of whole pages take seconds on a loaded 2-core runner: 5 s (the default) flaked there, and
    // 20 s did when make test's suites share the two cores with a slow VM (three walks took 21-23 s)
    testTimeout: 60_000,
  },
});
