// Page entry: restores the theme, loads the notebook and hands it to <rl-notebook>.
import demo from "../../notebooks/demo.json";
import "./rl-notebook.ts";
import type { NotebookView } from "./rl-notebook.ts";

try {
  const theme = localStorage.getItem("rlvr-theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch {
  // No storage: keep the system theme.
}

const el = document.querySelector("rl-notebook");
if (el) el.doc = demo as NotebookView;
