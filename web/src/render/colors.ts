// Colours of the canvas (dark theme, as the designer it follows), as RGBA floats 0..1.
export type Rgba = [number, number, number, number];

export function hex(s: string, a = 1): Rgba {
  const v = parseInt(s.slice(1), 16);
  return [((v >> 16) & 255) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255, a];
}

export const THEME = {
  background: hex('#1c1d21'),
  grid: hex('#ffffff', 0.06),
  body: hex('#2b2e35'),
  bodyStroke: hex('#454a55'),
  selected: hex('#f5c542'),
  text: hex('#e6e8ec'),
  textDim: hex('#a3a9b5'),
  edge: hex('#8a93a3', 0.85),
  edgeFar: hex('#8a93a3', 0.45),
  edgeSelected: hex('#f5c542'),
  groupFill: hex('#5b8def', 0.07),
  groupStroke: hex('#5b8def', 0.55),
  groupCollapsed: hex('#2a3550'),
  termFree: hex('#1c1d21'),
  termFreeStroke: hex('#c8cdd6'),
  termLinked: hex('#4fc3f7'),
  termInit: hex('#f0a04b'),
  error: hex('#e5484d'),
  warning: hex('#f0b429'),
  link: hex('#4fc3f7'),
};

const CATEGORY: Array<[RegExp, string]> = [
  [
    /^(Conv|ConvTranspose|Gemm|MatMul|MatMulInteger|QLinearConv|QLinearMatMul|Attention|MultiHeadAttention)$/,
    '#3b6fb6',
  ],
  [
    /^(Relu|LeakyRelu|PRelu|Sigmoid|HardSigmoid|Tanh|Elu|Selu|Celu|Gelu|FastGelu|Softmax|LogSoftmax|HardSwish|Mish|Softplus|Softsign|ThresholdedRelu|Clip)$/,
    '#b6513b',
  ],
  [/Normalization$/, '#3b9a6f'],
  [/Pool$/, '#8a5bb6'],
  [
    /^(Reshape|Transpose|Concat|Split|Gather|GatherElements|GatherND|Slice|Squeeze|Unsqueeze|Flatten|Shape|Expand|Tile|Pad|Identity|Cast|Resize)$/,
    '#5d6676',
  ],
  [
    /^(Add|Sub|Mul|Div|Pow|Sqrt|Exp|Log|Neg|Abs|Reciprocal|Sum|Mean|Max|Min|Erf|Where|Equal|Less|Greater|Not|And|Or)$/,
    '#a5822f',
  ],
  [/^Reduce/, '#2f8fa5'],
  [/^(Loop|If|Scan)$/, '#a53f7a'],
  [/^Input$/, '#2f855a'],
  [/^Output$/, '#9b2c2c'],
  [/^Constant$/, '#6b5d46'],
];

const cache = new Map<string, Rgba>();
export function opColor(op: string): Rgba {
  const known = cache.get(op);
  if (known) return known;
  let c: Rgba | undefined;
  for (const [re, col] of CATEGORY) if (re.test(op)) c = hex(col);
  if (!c) {
    let h = 0;
    for (const ch of op) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    const hue = (h % 360) / 360;
    c = hsl(hue, 0.35, 0.42);
  }
  cache.set(op, c);
  return c;
}

function hsl(h: number, s: number, l: number): Rgba {
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    return l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [f(0), f(8), f(4), 1];
}
