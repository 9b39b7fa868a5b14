// Geometry of a node glyph, shared by the layout (sizes), the renderer and picking (terminals).
// Text is drawn in a monospace atlas, so a line's width is its length times one advance.
import type { Leaf } from './viewmodel';

export const FONT = { title: 13, body: 11, advance: 0.6 }; // advance: em fraction of a monospace glyph
export const TERM_R = 5;
export const TERM_R_OPTIONAL = 3.5;
export const TERM_SPACING = 22;
export const MIN_W = 130;
export const MAX_W = 300;
export const HEADER_H = 20;
export const LINE_H = 15;
export const PAD = 8;
export const MAX_CHARS = Math.floor((MAX_W - 2 * PAD) / (FONT.body * FONT.advance));

export const GROUP = { collapsedW: 200, collapsedH: 46, header: 24, pad: 14 };

export function textWidth(s: string, size: number): number {
  return s.length * size * FONT.advance;
}

export function leafSize(leaf: Leaf): [number, number] {
  return [leafWidth(leaf), leafHeight(leaf)];
}

/** leafSize's width without the pair (the layout input measures every leaf on the first render's
 *  critical path: one array fewer per leaf). */
export function leafWidth(leaf: Leaf): number {
  // A loop, not a spread of mapped lines.
  let textW = Math.max(textWidth(leaf.op, FONT.title), textWidth(leaf.name, FONT.body));
  for (const l of leaf.lines) textW = Math.max(textW, textWidth(l, FONT.body));
  const terms = Math.max(leaf.inputs.length, leaf.outputs.length);
  return Math.ceil(Math.min(MAX_W, Math.max(MIN_W, textW + 2 * PAD, terms * TERM_SPACING + 12)));
}

export function leafHeight(leaf: Leaf): number {
  return HEADER_H + LINE_H * (1 + leaf.lines.length) + PAD;
}

/** Centre of terminal `i` of `count` along a node edge of width `w`, relative to the node's left. */
export function terminalX(i: number, count: number, w: number): number {
  return (w * (i + 1)) / (count + 1);
}
