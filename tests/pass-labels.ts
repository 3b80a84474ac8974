// Which kernels a GPU test's dispatches ran: the labels of the compute passes begun on encoders from
// device.createCommandEncoder() while watched. recorder.ts begins a pass per dispatch on such encoders, labelled with
// the pipeline's label, so this sees every dispatch, whether or not its pipeline came from the cache (a test that
// watched shader-module creation instead would miss a kernel compiled by an earlier test).

/** Starts recording; `labels` fills as passes begin, `stop()` restores the device. */
export function watchPassLabels(device: GPUDevice): { labels: string[]; stop: () => void } {
  const labels: string[] = [];
  const create = device.createCommandEncoder;
  device.createCommandEncoder = (d?: GPUCommandEncoderDescriptor) => {
    const enc = create.call(device, d);
    const begin = enc.beginComputePass;
    (enc as unknown as Record<string, unknown>).beginComputePass = (desc?: GPUComputePassDescriptor) => {
      labels.push(desc?.label ?? "");
      return begin.call(enc, desc);
    };
    return enc;
  };
  return { labels, stop: () => void (device.createCommandEncoder = create) };
}
