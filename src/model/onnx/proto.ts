// A small typed builder over onnx-proto's protobuf classes: named values, initializers from typed
// arrays, nodes with plain attribute objects, and the encoded ModelProto bytes.
import onnxProto from "onnx-proto";
import { f32ToF16Bits } from "../half.ts";

const { onnx } = onnxProto;

/** ONNX TensorProto data types this project emits. */
export const DT = { float: 1, uint8: 2, int32: 6, int64: 7, bool: 9, float16: 10 } as const;
/** One of the data types in `DT`. */
export type DType = (typeof DT)[keyof typeof DT];

/** A dimension: a fixed size or a symbolic name such as "batch". */
export type Dim = number | string;

/** An attribute value: numbers are INT unless listed in `floats` of `node()`. */
export type AttrValue = number | number[] | string | { float: number } | { floats: number[] } | { tensor: TensorInit };

/** A constant tensor: typed data with its ONNX type and shape. */
export interface TensorInit {
  dataType: DType;
  dims: number[];
  data: Float32Array | Uint16Array | Uint8Array | Int32Array | BigInt64Array;
}

type Attr = ReturnType<typeof onnx.AttributeProto.create>;

/** One external-data file of a model: the path the model names and its bytes. */
export interface ExternalFile {
  path: string;
  data: Uint8Array;
}

/** Builds one ONNX graph; `encode()` returns the model bytes for `InferenceSession.create`. */
export class GraphBuilder {
  private nodes: ReturnType<typeof onnx.NodeProto.create>[] = [];
  private inits: ReturnType<typeof onnx.TensorProto.create>[] = [];
  private inputs: ReturnType<typeof onnx.ValueInfoProto.create>[] = [];
  private outputs: ReturnType<typeof onnx.ValueInfoProto.create>[] = [];
  private used = new Set<string>();
  private counter = 0;
  private constCache = new Map<string, string>();
  /** Bytes held by initializers, for reports and size checks. */
  initializerBytes = 0;

  constructor(readonly name: string) {}

  /** A fresh value name derived from `hint`. */
  fresh(hint: string): string {
    let n = hint;
    while (this.used.has(n)) n = `${hint}_${++this.counter}`;
    this.used.add(n);
    return n;
  }

  /** Declares a graph input. */
  input(name: string, dataType: DType, dims: Dim[]): string {
    this.used.add(name);
    this.inputs.push(valueInfo(name, dataType, dims));
    return name;
  }

  /** Declares `value` as a graph output named `name` (an Identity node when the names differ). */
  output(value: string, name: string, dataType: DType, dims: Dim[]): string {
    if (value !== name) this.node("Identity", [value], {}, { outputs: [name] });
    this.outputs.push(valueInfo(name, dataType, dims));
    return name;
  }

  /** Declares the existing value `name` (a node's output of that name) as a graph output, with no Identity. */
  declareOutput(name: string, dataType: DType, dims: Dim[]): string {
    this.outputs.push(valueInfo(name, dataType, dims));
    return name;
  }

  /** Adds an initializer holding `t` under a fresh name based on `name`. */
  initializer(name: string, t: TensorInit): string {
    const n = this.fresh(name);
    const raw = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    this.inits.push(onnx.TensorProto.create({ name: n, dims: t.dims, dataType: t.dataType, rawData: raw }));
    this.initializerBytes += raw.byteLength;
    return n;
  }

  /** A small int64 constant (cached by value), for shapes, axes and indices. */
  i64(values: number[], scalar = false): string {
    const key = `i64:${scalar}:${values.join(",")}`;
    const hit = this.constCache.get(key);
    if (hit) return hit;
    const n = this.initializer("c_i64", {
      dataType: DT.int64,
      dims: scalar ? [] : [values.length],
      data: BigInt64Array.from(values.map(BigInt)),
    });
    this.constCache.set(key, n);
    return n;
  }

  /** A float constant (cached by value) of type float or float16. */
  scalar(value: number, dataType: typeof DT.float | typeof DT.float16 = DT.float): string {
    const key = `f:${dataType}:${value}`;
    const hit = this.constCache.get(key);
    if (hit) return hit;
    const data = dataType === DT.float ? new Float32Array([value]) : Uint16Array.of(f32ToF16Bits(value));
    const n = this.initializer("c_f", { dataType, dims: [], data });
    this.constCache.set(key, n);
    return n;
  }

  /**
   * Adds a node and returns its output names. Integer attributes are INT/INTS; floats must be
   * wrapped as `{ float }` / `{ floats }`. `outputs` fixes names, otherwise `nOut` fresh ones.
   */
  node(
    opType: string,
    inputs: string[],
    attrs: Record<string, AttrValue> = {},
    opts: { domain?: string; outputs?: string[]; nOut?: number } = {},
  ): string[] {
    const outs = opts.outputs ?? Array.from({ length: opts.nOut ?? 1 }, () => this.fresh(opType.toLowerCase()));
    for (const o of outs) this.used.add(o);
    const attribute = Object.entries(attrs).map(([k, v]) => attr(k, v));
    this.nodes.push(
      onnx.NodeProto.create({
        opType,
        input: inputs,
        output: outs,
        attribute,
        domain: opts.domain ?? "",
        name: this.fresh(`n_${opType}`),
      }),
    );
    return outs;
  }

  /** Shorthand for a single-output node. */
  op(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, domain?: string): string {
    return this.node(opType, inputs, attrs, { domain })[0];
  }

  /**
   * Encodes the model (IR 8, opset 17 plus com.microsoft 1). Initializers of at least
   * `externalMinBytes` become external data, one file per tensor whose data is a view of the
   * tensor (no copy): protobuf caps a model at 2 GiB, and a 0.5B model in f32 is larger.
   */
  encode(o: { externalMinBytes?: number } = {}): { model: Uint8Array; external: ExternalFile[] } {
    const external: ExternalFile[] = [];
    const min = o.externalMinBytes ?? Infinity;
    const inits = this.inits.map((t) => {
      // Integer constants feed shape inference, which needs them inline.
      if (t.rawData.byteLength < min || t.rawData.byteLength === 0 || t.dataType === DT.int64) return t;
      const path = `x${external.length}.bin`;
      external.push({ path, data: t.rawData });
      const entries = [{ key: "location", value: path }, { key: "offset", value: "0" }, {
        key: "length",
        value: String(t.rawData.byteLength),
      }];
      return onnx.TensorProto.create({
        name: t.name,
        dims: t.dims,
        dataType: t.dataType,
        dataLocation: 1,
        externalData: entries,
      });
    });
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: "rlvr-lab",
      opsetImport: [{ domain: "", version: 17 }, { domain: "com.microsoft", version: 1 }],
      graph: onnx.GraphProto.create({
        name: this.name,
        node: this.nodes,
        initializer: inits,
        input: this.inputs,
        output: this.outputs,
      }),
    });
    return { model: onnx.ModelProto.encode(model).finish(), external };
  }

  /** Node count, for tests that check "no adapter = no extra ops". */
  get nodeCount(): number {
    return this.nodes.length;
  }
}

function valueInfo(name: string, elemType: DType, dims: Dim[]) {
  const dim = dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d }));
  return onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType, shape: { dim } } } });
}

function attr(name: string, v: AttrValue): Attr {
  const T = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 } as const;
  if (typeof v === "number") return onnx.AttributeProto.create({ name, type: T.INT, i: v });
  if (typeof v === "string") {
    return onnx.AttributeProto.create({ name, type: T.STRING, s: new TextEncoder().encode(v) });
  }
  if (Array.isArray(v)) return onnx.AttributeProto.create({ name, type: T.INTS, ints: v });
  if ("float" in v) return onnx.AttributeProto.create({ name, type: T.FLOAT, f: v.float });
  if ("floats" in v) return onnx.AttributeProto.create({ name, type: T.FLOATS, floats: v.floats });
  const t = v.tensor;
  const raw = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return onnx.AttributeProto.create({ name, type: T.TENSOR, t: { dims: t.dims, dataType: t.dataType, rawData: raw } });
}
