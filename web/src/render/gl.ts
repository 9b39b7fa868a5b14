// Small WebGL2 helpers: programs and instanced layers (one VAO + one interleaved float buffer each).

/** Compiles and links without waiting: the status is checked on first use (checkProgram), so the GPU
 *  process compiles while the main thread builds the graph (a status query blocks until it is done). */
export function program(gl: WebGL2RenderingContext, vs: string, fs: string): WebGLProgram {
  const compile = (type: number, src: string) => {
    const s = gl.createShader(type)!;
    gl.shaderSource(s, src);
    gl.compileShader(s);
    return s;
  };
  const p = gl.createProgram()!;
  const v = compile(gl.VERTEX_SHADER, vs);
  const f = compile(gl.FRAGMENT_SHADER, fs);
  gl.attachShader(p, v);
  gl.attachShader(p, f);
  gl.linkProgram(p);
  pendingShaders.set(p, [v, f]);
  return p;
}

const pendingShaders = new WeakMap<WebGLProgram, [WebGLShader, WebGLShader]>();

/** Throws with the compiler's log if the program did not link (once per program). */
export function checkProgram(gl: WebGL2RenderingContext, p: WebGLProgram): void {
  const shaders = pendingShaders.get(p);
  if (!shaders) return;
  pendingShaders.delete(p);
  if (gl.getProgramParameter(p, gl.LINK_STATUS)) return;
  const logs = shaders.map((s) => gl.getShaderInfoLog(s)).filter(Boolean);
  throw new Error(`shader program: ${gl.getProgramInfoLog(p)} ${logs.join(' ')}`);
}

export interface AttrSpec {
  name: string;
  size: number;
}

/** One primitive kind drawn as instanced quads (4 vertices, triangle strip). */
export class InstancedLayer {
  readonly stride: number;
  private vao: WebGLVertexArrayObject;
  private buffer: WebGLBuffer;
  private capacity = 0;
  private bound = false;
  count = 0;

  constructor(
    private readonly gl: WebGL2RenderingContext,
    readonly prog: WebGLProgram,
    private readonly attrs: AttrSpec[],
  ) {
    this.stride = attrs.reduce((a, s) => a + s.size, 0);
    this.vao = gl.createVertexArray()!;
    this.buffer = gl.createBuffer()!;
  }

  /** Attribute locations need the linked program: looked up on first upload, not at construction. */
  private bindAttributes(): void {
    const gl = this.gl;
    checkProgram(gl, this.prog);
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    let offset = 0;
    for (const a of this.attrs) {
      const loc = gl.getAttribLocation(this.prog, a.name);
      if (loc >= 0) {
        gl.enableVertexAttribArray(loc);
        gl.vertexAttribPointer(loc, a.size, gl.FLOAT, false, this.stride * 4, offset * 4);
        gl.vertexAttribDivisor(loc, 1);
      }
      offset += a.size;
    }
    gl.bindVertexArray(null);
    this.bound = true;
  }

  upload(data: Float32Array, count: number): void {
    const gl = this.gl;
    if (!this.bound) this.bindAttributes();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    const bytes = count * this.stride * 4;
    if (bytes > this.capacity) {
      this.capacity = Math.max(bytes, this.capacity * 2);
      gl.bufferData(gl.ARRAY_BUFFER, this.capacity, gl.DYNAMIC_DRAW);
    }
    if (count > 0) gl.bufferSubData(gl.ARRAY_BUFFER, 0, data, 0, count * this.stride);
    this.count = count;
  }

  draw(): void {
    if (this.count === 0) return;
    const gl = this.gl;
    gl.bindVertexArray(this.vao);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, this.count);
    gl.bindVertexArray(null);
  }

  dispose(): void {
    this.gl.deleteBuffer(this.buffer);
    this.gl.deleteVertexArray(this.vao);
  }
}

/** A growable float array for building instance data without reallocating per item. */
export class FloatBuilder {
  data: Float32Array;
  length = 0;
  constructor(
    readonly stride: number,
    initial = 1024,
  ) {
    this.data = new Float32Array(initial * stride);
  }
  get count(): number {
    return this.length / this.stride;
  }
  reset(): void {
    this.length = 0;
  }
  push(...v: number[]): void {
    if (this.length + v.length > this.data.length) {
      const grown = new Float32Array(Math.max(this.data.length * 2, this.length + v.length));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    for (let i = 0; i < v.length; i++) this.data[this.length++] = v[i];
  }
}
