// Shaders. Every layer maps world coordinates to clip space with u_view = (scale, tx, ty) and
// u_size = canvas size in pixels: screen = world * scale + t.
const VIEW = `
uniform vec3 u_view;
uniform vec2 u_size;
vec4 toClip(vec2 world) {
  vec2 px = world * u_view.x + u_view.yz;
  return vec4(px.x / u_size.x * 2.0 - 1.0, 1.0 - px.y / u_size.y * 2.0, 0.0, 1.0);
}
vec2 corner() { return vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)); }
`;

// Rounded rectangles with a border: node bodies, headers, group boxes, terminals (as circles), badges.
export const RECT_VS = `#version 300 es
in vec4 a_rect; in vec4 a_fill; in vec4 a_stroke; in vec2 a_style;
out vec2 v_local; out vec2 v_half; out vec4 v_fill; out vec4 v_stroke; out vec2 v_style;
${VIEW}
void main() {
  float pad = 1.0 / u_view.x;
  vec2 c = corner();
  vec2 p = a_rect.xy - pad + c * (a_rect.zw + 2.0 * pad);
  v_half = a_rect.zw * 0.5;
  v_local = p - (a_rect.xy + v_half);
  v_fill = a_fill; v_stroke = a_stroke; v_style = a_style;
  gl_Position = toClip(p);
}`;
export const RECT_FS = `#version 300 es
precision highp float;
in vec2 v_local; in vec2 v_half; in vec4 v_fill; in vec4 v_stroke; in vec2 v_style;
uniform vec3 u_view;
out vec4 color;
void main() {
  float r = min(v_style.x, min(v_half.x, v_half.y));
  vec2 q = abs(v_local) - v_half + r;
  float d = (length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r) * u_view.x; // pixels, <0 inside
  float sw = v_style.y;
  float inside = clamp(0.5 - d, 0.0, 1.0);
  float border = sw > 0.0 ? clamp(d + sw + 0.5, 0.0, 1.0) : 0.0;
  vec4 c = mix(v_fill, v_stroke, border);
  color = vec4(c.rgb, c.a * inside);
  if (color.a < 0.004) discard;
}`;

// Line segments with a width in pixels: edges, the grid is separate.
export const LINE_VS = `#version 300 es
in vec4 a_seg; in vec4 a_color; in float a_width;
out vec4 v_color;
${VIEW}
void main() {
  vec2 a = a_seg.xy, b = a_seg.zw;
  vec2 d = b - a;
  float len = length(d);
  vec2 dir = len > 0.0 ? d / len : vec2(1.0, 0.0);
  vec2 n = vec2(-dir.y, dir.x) * (a_width * 0.5 / u_view.x);
  vec2 c = corner();
  vec2 p = mix(a, b, c.x) + n * (c.y * 2.0 - 1.0);
  v_color = a_color;
  gl_Position = toClip(p);
}`;
export const LINE_FS = `#version 300 es
precision mediump float;
in vec4 v_color; out vec4 color;
void main() { color = v_color; }`;

// Glyphs from the atlas: one quad per character.
export const GLYPH_VS = `#version 300 es
in vec4 a_rect; in vec4 a_uv; in vec4 a_color;
out vec2 v_uv; out vec4 v_color;
${VIEW}
void main() {
  vec2 c = corner();
  v_uv = a_uv.xy + c * a_uv.zw;
  v_color = a_color;
  gl_Position = toClip(a_rect.xy + c * a_rect.zw);
}`;
export const GLYPH_FS = `#version 300 es
precision mediump float;
in vec2 v_uv; in vec4 v_color;
uniform sampler2D u_atlas;
out vec4 color;
void main() {
  float a = texture(u_atlas, v_uv).a;
  color = vec4(v_color.rgb, v_color.a * a);
  if (color.a < 0.01) discard;
}`;

// The background grid: one full-screen triangle, lines every u_step world units.
export const GRID_VS = `#version 300 es
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}`;
export const GRID_FS = `#version 300 es
precision highp float;
uniform vec3 u_view; uniform vec2 u_size; uniform float u_step; uniform vec4 u_color;
out vec4 color;
void main() {
  vec2 px = vec2(gl_FragCoord.x, u_size.y - gl_FragCoord.y);
  vec2 w = (px - u_view.yz) / u_view.x / u_step;
  vec2 f = abs(fract(w - 0.5) - 0.5) * u_step * u_view.x;
  float line = 1.0 - clamp(min(f.x, f.y), 0.0, 1.0);
  color = vec4(u_color.rgb, u_color.a * line);
  if (color.a < 0.01) discard;
}`;
