// tessera profile MODEL [inputs] [--report FILE.json]: times every executed node over several runs and
// prints a per-layer table sorted by cost; the report is the versioned JSON of docs/profile-report.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/json_types.h"
#include "cli/run_inputs.h"
#include "profiler/report.h"
#include "util/atomic_file.h"

namespace tessera::cli {
namespace {

using profiler::Layer;

std::string shapes_str(const std::vector<rt::Shape>& shapes) {
  std::string s;
  for (const auto& sh : shapes) {
    if (!s.empty()) s += ' ';
    s += rt::shape_str(sh);
  }
  return s;
}

// The roofline columns of a row: achieved TFLOP/s and GB/s, the bound and the percentage of it reached.
std::string roofline_cells(const Layer& l, int runs, const profiler::Peaks& peaks) {
  const profiler::Work w = l.work_per_run(runs);
  const profiler::Roofline r = profiler::layer_roofline(w, l.total_us / 1000.0 / runs, peaks);
  const std::string tflops = w.flops ? fmt::format("{:.2f}", r.tflops_per_s) : "-";
  const std::string gbps = w.bytes ? fmt::format("{:.1f}", r.gbps) : "-";
  const std::string pct = r.bound.empty() ? "-" : fmt::format("{:.0f}", r.percent_of_bound);
  return fmt::format(" {:>8} {:>8} {:<7} {:>6}", tflops, gbps, r.bound.empty() ? "-" : r.bound, pct);
}

void print_table(const std::vector<Layer>& layers, double layer_sum_us, int runs, size_t limit,
                 const profiler::Peaks& peaks) {
  // The kernel and the path it took: "dnnl (jit_1x1:avx512_core)", "dnnl (own gemm)". The column is as
  // wide as its longest entry among the rows shown.
  auto kernel_of = [](const Layer& l) {
    return l.path.empty() ? l.kernel : fmt::format("{} ({})", l.kernel, l.path);
  };
  size_t kernel_width = 10;
  for (size_t i = 0; i < layers.size() && i < limit; ++i)
    kernel_width = std::max(kernel_width, kernel_of(layers[i]).size());
  // Traced GPU runs: each layer's span too (its first kernel's start to the next layer's), launch gaps in.
  const bool spans = std::any_of(layers.begin(), layers.end(), [](const Layer& l) { return l.span_us > 0; });
  // And its span from stamped replays (untraced), where the profile made them.
  const bool stamped =
      std::any_of(layers.begin(), layers.end(), [](const Layer& l) { return l.stamped_us >= 0; });
  fmt::print("{:>4}  {:<36} {:<22} {:<{}} {:>6} {:>10} {:>6}{}{} {:>8} {:>8} {:<7} {:>6}  {}\n", "#", "node",
             "op", "kernel", kernel_width, "calls", "time ms", "%",
             spans ? fmt::format(" {:>10}", "span ms") : "",
             stamped ? fmt::format(" {:>10}", "stamped ms") : "", "TFLOP/s", "GB/s", "bound", "%bound",
             "output shape");
  size_t shown = 0;
  for (const auto& l : layers) {
    if (shown++ == limit) {
      fmt::print("  ... {} more layers (--top 0 shows all)\n", layers.size() - limit);
      break;
    }
    std::string name = l.name.empty() ? fmt::format("#{}", l.node_id) : l.name;
    if (l.graph != "main") name = l.graph + "/" + name;
    if (name.size() > 36) name = "..." + name.substr(name.size() - 33);
    double ms = l.total_us / 1000.0 / runs;
    double pct = layer_sum_us > 0 ? 100.0 * l.total_us / runs / layer_sum_us : 0;
    fmt::print("{:>4}  {:<36} {:<22} {:<{}} {:>6.0f} {:>10.4f} {:>6.2f}{}{}{}  {}\n", shown, name, l.op_type,
               kernel_of(l), kernel_width, static_cast<double>(l.calls) / runs, ms, pct,
               spans ? fmt::format(" {:>10.4f}", l.span_us / 1000.0 / runs) : "",
               !stamped           ? std::string()
               : l.stamped_us < 0 ? fmt::format(" {:>10}", "-")
                                  : fmt::format(" {:>10.4f}", l.stamped_us / 1000.0),
               roofline_cells(l, runs, peaks), shapes_str(l.output_shapes));
    if (!l.fused_from.empty()) {
      std::string from;
      for (const auto& f : l.fused_from) from += (from.empty() ? "" : ", ") + f;
      fmt::print("{:>6}fused from: {}\n", "", from);
    }
    if (!l.device_kernels.empty()) {
      std::string ran;
      for (const auto& k : l.device_kernels) ran += (ran.empty() ? "" : ", ") + k;
      if (ran.size() > 160) ran = ran.substr(0, 157) + "...";
      fmt::print("{:>6}ran: {}\n", "", ran);
    }
  }
}

// Where the layers of a GPU profile came from, how they add up to the device's end-to-end time, and
// what tracing cost.
void print_trace(const profiler::TraceSummary& t, size_t runs) {
  if (t.layers_source == "replayed graph")
    fmt::print("layers from {} traced replays of the captured CUDA graph (work tied to nodes by {})\n", runs,
               t.method);
  else
    fmt::print("layers from {} traced runs after the timed ones, node by node{}\n", runs,
               t.note.empty() ? "" : fmt::format(" ({})", t.note));
  if (t.device_ms > 0)
    fmt::print("device end-to-end {:.3f} ms: layer times sum to {:.3f} ms ({:.1f}%), spans to {:.3f} ms\n",
               t.device_ms, t.layer_sum_ms, 100.0 * t.layer_sum_ms / t.device_ms, t.span_sum_ms);
  if (t.untraced_device_ms > 0 && t.traced_device_ms > 0)
    fmt::print("graph device time median {:.3f} ms untraced, {:.3f} ms traced (CUPTI){}\n",
               t.untraced_device_ms, t.traced_device_ms,
               fmt::format(": {:+.1f}%", t.device_overhead_percent()));
  if (t.stamped_replays > 0)
    fmt::print(
        "stamped layer times from {} replays, one stamp each: they sum to {:.3f} ms; graph device time "
        "median {:.3f} ms stamped: profiling overhead {:+.1f}%\n",
        t.stamped_replays, t.stamped_sum_ms, t.stamped_device_ms, t.stamp_overhead_percent());
  else if (!t.stamp_note.empty())
    fmt::print("no stamped layer times: {}\n", t.stamp_note);
  fmt::print("run time median {:.3f} ms untraced, {:.3f} ms traced: {:+.1f}% on the host{}\n",
             t.untraced_run_ms, t.traced_run_ms, t.overhead_percent(),
             t.traced_device_ms > 0
                 ? " (CUPTI instruments the traced graph's launch, before the device starts)"
                 : "");
}

// 1234567 -> "1.23 M": FLOPs and bytes in the summary.
std::string si(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  size_t u = 0;
  while (v >= 1000 && u + 1 < std::size(units)) v /= 1000, ++u;
  return fmt::format("{:.{}f} {}", v, u == 0 ? 0 : 2, units[u]);
}

// The model's work, where its layer time goes by bound and how close each kind of layer gets.
void print_roofline(const profiler::RooflineSummary& r) {
  fmt::print("work per run {}FLOP, {}B moved at least; {:.3f} TFLOP/s over the end-to-end median{}\n",
             si(r.model_flops), si(r.model_bytes), r.model_tflops_per_s(),
             r.peaks.tflops > 0
                 ? fmt::format(" ({:.1f}% of peak)", 100.0 * r.model_tflops_per_s() / r.peaks.tflops)
                 : "");
  if (!r.peaks.known()) {
    fmt::print("roofline: {}, so no bounds\n",
               r.peaks.tflops > 0 ? "no peak bandwidth for this device (--peak-gbps gives it)"
               : r.peaks.gbps > 0 ? "no peak FLOP rate for this device (--peak-tflops gives it)"
                                  : "no peaks for this device (--peak-tflops and --peak-gbps give them)");
  } else {
    auto share = [&](double ms) { return r.layer_ms > 0 ? 100.0 * ms / r.layer_ms : 0.0; };
    auto pct = [](double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; };
    const auto &c = r.compute, &m = r.memory;
    const double c_rate = c.time_ms > 0 ? c.flops / c.time_ms / 1e9 : 0;
    const double m_rate = m.time_ms > 0 ? m.bytes / m.time_ms / 1e6 : 0;
    fmt::print("roofline (peaks {:.4g} TFLOP/s, {:.4g} GB/s; {}):\n", r.peaks.tflops, r.peaks.gbps,
               r.peaks.source);
    // (Their rate against the peak is also how close they get to their bounds, taken together.)
    fmt::print(
        "  compute-bound {} layers {:.3f} ms ({:.1f}% of layer time): {:.2f} TFLOP/s, {:.1f}% of peak\n",
        c.layers, c.time_ms, share(c.time_ms), c_rate, pct(c_rate, r.peaks.tflops));
    fmt::print("  memory-bound {} layers {:.3f} ms ({:.1f}%): {:.1f} GB/s, {:.1f}% of peak\n", m.layers,
               m.time_ms, share(m.time_ms), m_rate, pct(m_rate, r.peaks.gbps));
    fmt::print("  no bound {} layers {:.3f} ms ({:.1f}%: copies between devices, views, FLOPs not counted)\n",
               r.other.layers, r.other.time_ms, share(r.other.time_ms));
  }
  if (!r.not_counted.empty()) {
    std::string ops;
    for (const auto& op : r.not_counted) ops += (ops.empty() ? "" : ", ") + op;
    fmt::print("FLOPs not counted for: {}\n", ops);
  }
}

// The peaks the bounds are taken against: --peak-tflops/--peak-gbps where given, else the GPU's
// datasheet (dense, in the session's precision); none for a CPU unless given.
profiler::Peaks session_peaks(const rt::Session& session, double tflops, double gbps) {
  const rt::BackendInfo first = session.backends().front();  // backends() is a copy
  std::optional<profiler::Peaks> sheet;
  if (first.name != "cpu")
    sheet = profiler::datasheet_peaks(first.device_name, session.precision().precision);
  profiler::Peaks p = sheet.value_or(profiler::Peaks{});
  if (tflops > 0 && gbps > 0) return {tflops, gbps, "given"};
  if (tflops <= 0 && gbps <= 0) return p;
  if (tflops > 0) p.tflops = tflops;
  if (gbps > 0) p.gbps = gbps;
  p.source =
      sheet ? fmt::format("{} given, the other from the {}", tflops > 0 ? "TFLOP/s" : "GB/s", sheet->source)
            : "given";
  return p;
}

// A peak: a number above 0 ("--peak-tflops: must be a number above 0, got '-1'").
CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v))
          return fmt::format("must be a number above 0, got '{}'", text);
        return {};
      },
      "NUMBER > 0");
}

}  // namespace

void add_profile_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("profile",
                                 "Time every layer of a model: a per-layer table sorted by cost, end-to-end\n"
                                 "latency, peak memory; --report writes the versioned JSON report.");
  auto s = std::make_shared<RunSettings>();
  auto report = std::make_shared<std::string>();
  auto top = std::make_shared<size_t>(25);
  auto peak_tflops = std::make_shared<double>(0), peak_gbps = std::make_shared<double>(0);
  add_run_options(cmd, *s);
  cmd->add_option("--peak-tflops", *peak_tflops,
                  "Peak FLOP rate of the device in the session's precision, TFLOP/s (a measured one is best; "
                  "default: the GPU's datasheet, none on a CPU)")
      ->check(positive_number());
  cmd->add_option("--peak-gbps", *peak_gbps,
                  "Peak memory bandwidth of the device, GB/s (default: as --peak-tflops)")
      ->check(positive_number());
  cmd->add_option("--stamp-repeats", s->stamp_repeats,
                  "GPU: replays per layer boundary of the stamped run that times the layers untraced, one "
                  "clock-writing kernel per replay (docs/cuda.md, \"Stamped layer times\"); 0 leaves it out")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--report", *report, "Write the JSON report (docs/profile-report.md) to this file");
  cmd->add_option("--top", *top, "Rows of the table (0: all)");
  cmd->callback([s, report, top, peak_tflops, peak_gbps, &status] {
    std::unique_ptr<rt::Session> session;
    std::vector<std::pair<std::string, rt::Value>> feeds;
    // Session build (load, optimise, compile, the kernels' preparation: cuDNN plans, weight uploads).
    double build_ms = 0;
    try {
      auto t0 = std::chrono::steady_clock::now();
      session = rt::Session::load(s->model, session_options(*s));
      build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      feeds = gather_inputs(*session, *s);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera profile: {}: {}\n", s->model, e.what());
      status = kUnreadable;
      return;
    }
    profiler::LayerTable table;
    // Each run's own time (RunStats::total_us: from its first node to its device's last work, without the
    // trace's setup and flush), untraced and traced: their medians give the profiling overhead.
    // The replayed graph's device time too (events after a gate, the same in both kinds of run): the
    // profiling overhead on the device, where the layer times are measured.
    std::vector<double> run_ms, traced_run_ms, device_ms, traced_device_ms;
    auto collect = [&](const rt::RunStats& st) {
      table.add(st);
      traced_run_ms.push_back(st.total_us / 1000.0);
      if (st.replay_device_us > 0) traced_device_ms.push_back(st.replay_device_us / 1000.0);
    };
    auto untraced = [&](const rt::RunStats& st) { run_ms.push_back(st.total_us / 1000.0); };
    auto device_timed = [&](const rt::RunStats& st) {
      if (st.replay_device_us > 0) device_ms.push_back(st.replay_device_us / 1000.0);
    };
    std::vector<rt::Value> outs;
    std::vector<double> ms, traced_ms;
    // On a GPU the end-to-end time comes from runs as `tessera run` makes them (replayed as one device
    // graph), and the layers from as many traced runs after them: traced replays of the same graph where
    // the model is replayed (each layer the device time of the kernels it captured, CUPTI), else the
    // nodes one by one. The latency carries no profiling overhead. The CPU times its nodes inline.
    const bool device = session->backends().front().name != "cpu";
    try {
      if (device) {
        ms = timed_runs(*session, feeds, *s, outs, untraced);
        RunSettings again = *s;
        again.warmup = 0;
        timed_runs(*session, feeds, again, outs, device_timed, RunTiming::kDevice);
        traced_ms = timed_runs(*session, feeds, again, outs, collect, RunTiming::kNodes);
        // Last, one stamped run: the layers' spans untraced (runtime/replay_trace.h, stamped_spans).
        if (s->stamp_repeats > 0) {
          RunSettings once = again;
          once.iterations = 1;
          timed_runs(
              *session, feeds, once, outs, [&](const rt::RunStats& st) { table.add_stamped(st); },
              RunTiming::kStamped);
        }
      } else {
        ms = timed_runs(*session, feeds, *s, outs, collect, RunTiming::kNodes);
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "tessera profile: {}: {}\n", s->model, e.what());
      status = kFindings;
      return;
    }
    std::vector<Layer> layers = table.layers();
    int runs = s->iterations;
    double layer_sum_us = table.total_us() / runs;
    auto lat = profiler::summarize(ms);
    profiler::count_work(layers, session->model(), feeds);
    const profiler::Peaks peaks = session_peaks(*session, *peak_tflops, *peak_gbps);
    profiler::ReportInfo info{s->model,      s->backend, s->threads, s->optimization,
                              s->iterations, s->warmup,  feeds,      peaks};
    auto j = profiler::report_json(info, *session, lat, layers, layer_sum_us, runs);
    const auto& last = session->last_stats();
    profiler::TraceSummary trace = profiler::summarize_trace(
        table, {run_ms, traced_run_ms, device_ms, traced_device_ms},
        last.replay_trace_note.empty() ? last.device_graph_note : last.replay_trace_note);
    j["session_build_ms"] = build_ms;
    if (!traced_ms.empty()) {
      auto t = profiler::summarize(traced_ms);
      j["traced_latency_ms"] = {{"mean", t.mean_ms}, {"median", t.median_ms}, {"min", t.min_ms}};
      j["trace"] = profiler::trace_json(trace);
    }
    if (!report->empty()) {
      std::string text = j.dump(2) + "\n";
      try {
        util::write_file_atomically(*report, std::as_bytes(std::span(text)));
      } catch (const std::exception& e) {
        fmt::print(stderr, "tessera profile: cannot write {}: {}\n", *report, e.what());
        status = kUnreadable;
        return;
      }
    }
    if (s->json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    const auto& st = session->last_stats();
    fmt::print("{}: {} runs ({} warmup), {} optimisation, {} layers on {}\n", s->model, runs, s->warmup,
               s->optimization, layers.size(), placement_line(*session));
    print_table(layers, layer_sum_us, runs, *top == 0 ? layers.size() : *top, peaks);
    fmt::print("end-to-end  median {:.3f} ms  mean {:.3f} ms  min {:.3f} ms\n", lat.median_ms, lat.mean_ms,
               lat.min_ms);
    fmt::print("sum of layer times {:.3f} ms ({:.1f}% of the mean end-to-end time)\n", layer_sum_us / 1000.0,
               lat.mean_ms > 0 ? layer_sum_us / 10.0 / lat.mean_ms : 0.0);
    if (!traced_ms.empty()) print_trace(trace, traced_ms.size());
    print_roofline(profiler::summarize_roofline(layers, runs, peaks, lat.median_ms));
    fmt::print("memory  {}\n", memory_line(st));
    fmt::print("session built in {:.0f} ms\n", build_ms);
    if (!report->empty()) fmt::print("report written to {}\n", *report);
  });
}

}  // namespace tessera::cli
