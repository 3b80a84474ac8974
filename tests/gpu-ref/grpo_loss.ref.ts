// The float64 reference of grpo_loss.wgsl is src/core/grpo.ts (grpoLoss, aggregationWeights,
// entropyMean), owned by the RL math; re-exported here so the kernel's test reads as the others do.
export { aggregationWeights, entropyMean, grpoLoss } from "../../src/core/grpo.ts";
