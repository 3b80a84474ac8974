// Page entry: restores the theme, opens the notebook (a share link, else the autosave, else the
// built-in demo) and hands it to <rl-notebook>.
import demo from "../../notebooks/demo.json";
import { NotebookController } from "./notebook-controller.ts";
import "./rl-notebook.ts";

function storage(): Storage | null {
  try {
    return localStorage;
  } catch {
    return null;
  }
}

const theme = storage()?.getItem("rlvr-theme");
if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;

const el = document.querySelector("rl-notebook");
if (el) el.controller = new NotebookController(demo, storage(), location.hash);
// A link pasted into this tab's address bar changes only the hash: open it as a load would. What
// was open is in storage (the autosave, or a link's draft), so the reload loses nothing.
addEventListener("hashchange", () => {
  if (location.hash.startsWith("#nb=")) location.reload();
});
