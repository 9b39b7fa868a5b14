import { describe, expect, it } from 'vitest';
import { logLines, readOptions, TRANSFORMS } from '../../src/ui/transforms';
import { defaultOutput, runStatus } from '../../src/ui/tools';
import type { ToolRun } from '../../src/api/types';

const spec = (id: string) => TRANSFORMS.find((t) => t.id === id)!;

describe('Model menu options', () => {
  it('reads each option as the server takes it', () => {
    expect(readOptions(spec('fp16'), { keep_io_types: true, op_block_list: ' Relu, Softmax ,' })).toEqual({
      keep_io_types: true,
      op_block_list: ['Relu', 'Softmax'],
    });
    expect(readOptions(spec('sanitize'), { fold_threshold: '1024', passes: '3' })).toEqual({
      fold_threshold: 1024,
      passes: 3,
    });
    expect(
      readOptions(spec('set_shapes'), { shapes: 'x=1x3x224x224\n mask = batchx128 ', dim_params: 'x:0=N' }),
    ).toEqual({
      shapes: [
        { input: 'x', shape: '1x3x224x224' },
        { input: 'mask', shape: 'batchx128' },
      ],
      dim_params: [{ input: 'x', axis: 0, name: 'N' }],
    });
    expect(readOptions(spec('import_layer'), { path: ' models/enc.onnx ', name: 'Encoder' })).toEqual({
      path: 'models/enc.onnx',
      name: 'Encoder',
      domain: 'local',
    });
    expect(readOptions(spec('convert_tensors'), { to: 'bfloat16', initializers: '^W' })).toEqual({
      to: 'bfloat16',
      from: 'float',
      initializers: '^W',
    });
  });

  it('names the field that is wrong', () => {
    expect(() => readOptions(spec('sanitize'), { passes: '-1' })).toThrow(
      "passes (0: until nothing changes): '-1' is not a non-negative integer",
    );
    expect(() => readOptions(spec('set_shapes'), { shapes: 'x 1x3' })).toThrow(
      "shapes: 'x 1x3' is not NAME=SHAPE",
    );
    expect(() => readOptions(spec('set_shapes'), { dim_params: 'x=batch' })).toThrow(
      "dimension variables: 'x=batch' is not NAME:AXIS=VARIABLE",
    );
  });

  it('prints the log as the CLI does', () => {
    expect(
      logLines({
        counts: [
          ['nodes removed', 0],
          ['casts added', 0],
          ['initializers converted', 2],
        ],
        warnings: ['W clamped'],
        details: ['W: float -> float16'],
        changed: true,
      }),
    ).toEqual(['warning: W clamped', 'nodes removed: 0', 'initializers converted: 2', 'W: float -> float16']);
    expect(logLines({ counts: [], warnings: [], details: [], changed: false })).toEqual(['nothing changed']);
  });
});

describe('Tools menu', () => {
  const run = (r: Partial<ToolRun>): ToolRun => ({
    id: 'r1',
    tool: 't',
    output: '',
    next: 0,
    done: true,
    cancelled: false,
    output_file: '',
    ...r,
  });
  it('says how a run ended', () => {
    expect(runStatus(run({ done: false }))).toBe('running…');
    expect(runStatus(run({ exit_status: 3 }))).toBe('exited with status 3');
    expect(runStatus(run({ cancelled: true, signal: 15 }))).toBe('cancelled (signal 15)');
    expect(runStatus(run({ signal: 9 }))).toBe('ended by signal 9');
  });
  it('puts an output model beside the model, relative to the root', () => {
    expect(defaultOutput('/r/models/a.onnx', '/r', 'simplify')).toBe('models/a.simplify.onnx');
    expect(defaultOutput('/r/b.onnx', '/r', 'my tool!')).toBe('b.my_tool_.onnx');
  });
});
