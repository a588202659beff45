import { mount } from "svelte";
import "./app.css";

// One UI, two places: inside MGDS Desktop's window (Tauri) the whole app; in a browser, served by
// the lab's service, what a browser session offers (see src/web/). Each is its own chunk, so a
// browser loads none of the desktop's screens.
const target = document.getElementById("app")!;
if ("__TAURI_INTERNALS__" in window) {
  const { default: App } = await import("./App.svelte");
  mount(App, { target });
} else {
  const { default: WebApp } = await import("./web/WebApp.svelte");
  mount(WebApp, { target });
}
