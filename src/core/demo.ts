// The built-in demo's splits (public/demo/<split>.jsonl, made by `rlvr make-demo`): the split the RL
// stages train on, and the four that measure what they taught (docs/demo.md); test-written is written by hand.
/** The demo's question splits, in the order the page and reports show them. */
export const DEMO_SPLITS = ["train", "test-concepts", "test-templates", "heldout-db", "test-written"] as const;
export type DemoSplit = (typeof DEMO_SPLITS)[number];
