// Small WebGL2 helpers: programs and instanced layers (one VAO + one interleaved float buffer each).

export function program(gl: WebGL2RenderingContext, vs: string, fs: string): WebGLProgram {
  const compile = (type: number, src: string) => {
    const s = gl.createShader(type)!;
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(s)}`);
    return s;
  };
  const p = gl.createProgram()!;
  gl.attachShader(p, compile(gl.VERTEX_SHADER, vs));
  gl.attachShader(p, compile(gl.FRAGMENT_SHADER, fs));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`program: ${gl.getProgramInfoLog(p)}`);
  return p;
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
  count = 0;

  constructor(
    private readonly gl: WebGL2RenderingContext,
    readonly prog: WebGLProgram,
    attrs: AttrSpec[],
  ) {
    this.stride = attrs.reduce((a, s) => a + s.size, 0);
    this.vao = gl.createVertexArray()!;
    this.buffer = gl.createBuffer()!;
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    let offset = 0;
    for (const a of attrs) {
      const loc = gl.getAttribLocation(prog, a.name);
      if (loc >= 0) {
        gl.enableVertexAttribArray(loc);
        gl.vertexAttribPointer(loc, a.size, gl.FLOAT, false, this.stride * 4, offset * 4);
        gl.vertexAttribDivisor(loc, 1);
      }
      offset += a.size;
    }
    gl.bindVertexArray(null);
  }

  upload(data: Float32Array, count: number): void {
    const gl = this.gl;
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
